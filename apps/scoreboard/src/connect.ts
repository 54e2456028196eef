import { Code, ConnectError, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "pino";
import { Health } from "@repo/proto-gen/grpc/health/v1";
import * as reflectionV1 from "@repo/proto-gen/grpc/reflection/v1";
import * as reflectionV1alpha from "@repo/proto-gen/grpc/reflection/v1alpha";
import { ScoreboardService } from "@repo/proto-gen/scoreboard/v1";
import type { HealthRegistry } from "./health";
import type { ScoreboardMetrics } from "./metrics";
import { createReflection } from "./reflection";
import { createScoreboardService } from "./service";
import type { SnapshotStore } from "./snapshot/store";

/** What the routes answer from. */
export interface RouteDeps {
  store: SnapshotStore;
  health: HealthRegistry;
  metrics: ScoreboardMetrics;
  logger: Logger;
}

/** `NotFound` -> `NOT_FOUND`: gRPC's own spelling, for metric labels. */
export function codeName(code: Code | undefined): string {
  return code === undefined ? "OK" : Code[code].replace(/(?<=[a-z])(?=[A-Z])/g, "_").toUpperCase();
}

/**
 * Counts and times every call, and turns anything but a ConnectError into a
 * bare INTERNAL, so that no internal detail reaches a client (it is logged).
 */
export function observe({ metrics, logger }: Pick<RouteDeps, "metrics" | "logger">): Interceptor {
  return (next) => async (request) => {
    const method = request.method.name;
    const stopTimer = metrics.latency.startTimer({ method });
    try {
      const response = await next(request);
      metrics.requests.inc({ method, code: "OK" });
      return response;
    } catch (error) {
      const known = error instanceof ConnectError ? error : undefined;
      if (known === undefined) logger.error({ err: error, method }, "unexpected error in a call");
      metrics.requests.inc({ method, code: codeName(known?.code ?? Code.Internal) });
      throw known ?? new ConnectError("internal error", Code.Internal);
    } finally {
      stopTimer();
    }
  };
}

/** Every service on the port: the scoreboard, health, and reflection v1 and v1alpha. */
export function routes(deps: RouteDeps): (router: ConnectRouter) => void {
  const reflection = createReflection([ScoreboardService, Health]);
  return (router) => {
    router.service(ScoreboardService, createScoreboardService(deps.store));
    router.service(Health, deps.health.service());
    router.service(reflectionV1.ServerReflection, reflection.v1);
    router.service(reflectionV1alpha.ServerReflection, reflection.v1alpha);
  };
}
