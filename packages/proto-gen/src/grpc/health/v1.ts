/** grpc.health.v1: the standard gRPC health-checking service. */
export * from "../../gen/health/v1/health_pb";
