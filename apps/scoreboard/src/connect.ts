import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import type { Logger } from "pino";
import { Health } from "@repo/proto-gen/grpc/health/v1";
import * as reflectionV1 from "@repo/proto-gen/grpc/reflection/v1";
import * as reflectionV1alpha from "@repo/proto-gen/grpc/reflection/v1alpha";
import { ScoreboardService } from "@repo/proto-gen/scoreboard/v1";
import type { CallRecorder } from "./calls";
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

/** Records every call the routes answer (see {@link createCallRecorder}). */
export function observe(record: CallRecorder): Interceptor {
  return (next) => async (request) => {
    const call = record(request.method);
    try {
      const response = await next(request);
      call.ok();
      return response;
    } catch (error) {
      throw call.fail(error);
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
