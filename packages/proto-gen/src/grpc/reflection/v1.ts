/** grpc.reflection.v1: the server reflection service. */
export * from "../../gen/grpc/reflection/v1/reflection_pb";
