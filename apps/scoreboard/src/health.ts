import { EventEmitter, on } from "node:events";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import {
  type Health,
  type HealthCheckResponse,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "@repo/proto-gen/grpc/health/v1";

export { ServingStatus };

/**
 * Serving status per service name ("" is the whole server), as grpc.health.v1
 * reports it; Watch streams see every change and end when the server drains.
 */
export class HealthRegistry {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly changes = new EventEmitter();
  private readonly draining = new AbortController();

  constructor(services: readonly string[]) {
    for (const service of ["", ...services]) this.statuses.set(service, ServingStatus.NOT_SERVING);
    this.changes.setMaxListeners(0);
  }

  /** Sets every known service to `status`. */
  setAll(status: ServingStatus): void {
    for (const service of this.statuses.keys()) this.statuses.set(service, status);
    this.changes.emit("change");
  }

  /** NOT_SERVING for every service, then ends every Watch stream. */
  drain(): void {
    this.setAll(ServingStatus.NOT_SERVING);
    setImmediate(() => this.draining.abort());
  }

  /** The status of `service`, or `undefined` when the server does not know it. */
  get(service: string): ServingStatus | undefined {
    return this.statuses.get(service);
  }

  /** Yields the status of `service` now and on every change, until `signal` or drain. */
  private async *watch(
    service: string,
    callSignal: AbortSignal,
  ): AsyncGenerator<Pick<HealthCheckResponse, "status">> {
    const signal = AbortSignal.any([callSignal, this.draining.signal]);
    const changes = on(this.changes, "change", { signal });
    let last: ServingStatus | undefined;
    try {
      do {
        const status = this.get(service) ?? ServingStatus.SERVICE_UNKNOWN;
        if (status !== last) yield { status };
        last = status;
      } while (!signal.aborted && (await changes.next()).done !== true);
    } catch (error) {
      if (!signal.aborted) throw error;
    }
  }

  /** The grpc.health.v1.Health implementation over this registry. */
  service(): ServiceImpl<typeof Health> {
    const reply = (status: ServingStatus): Pick<HealthCheckResponse, "status"> => ({ status });
    return {
      check: ({ service }) => {
        const status = this.get(service);
        if (status === undefined)
          throw new ConnectError(`unknown service ${service}`, Code.NotFound);
        return reply(status);
      },
      list: () => ({
        statuses: Object.fromEntries(
          [...this.statuses].map(([name, status]) => [name, reply(status)]),
        ),
      }),
      watch: ({ service }, context) => this.watch(service, context.signal),
    };
  }
}
