/** grpc.reflection.v1alpha: the older server reflection service that grpcurl still asks first. */
export * from "../../gen/grpc/reflection/v1alpha/reflection_pb";
