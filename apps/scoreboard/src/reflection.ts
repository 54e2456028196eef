import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { DescFile, DescService } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import * as v1 from "@repo/proto-gen/grpc/reflection/v1";
import * as v1alpha from "@repo/proto-gen/grpc/reflection/v1alpha";

type Request = v1.ServerReflectionRequest;
type Response = v1.ServerReflectionResponse;

/** Every file the given services need, by name, with their descriptors serialized once. */
function indexFiles(services: readonly DescService[]) {
  const files = new Map<string, DescFile>();
  const visit = (file: DescFile): void => {
    if (files.has(file.name)) return;
    files.set(file.name, file);
    file.dependencies.forEach(visit);
  };
  services.forEach((service) => visit(service.file));
  const symbols = new Map<string, DescFile>();
  for (const file of files.values()) {
    for (const type of nestedTypes(file)) {
      symbols.set(type.typeName, file);
      if (type.kind === "service") {
        for (const method of type.methods) symbols.set(`${type.typeName}.${method.name}`, file);
      }
    }
  }
  const bytes = new Map<string, Uint8Array>();
  for (const [name, file] of files)
    bytes.set(name, toBinary(FileDescriptorProtoSchema, file.proto));
  /** The file and everything it imports, each once: what grpcurl and buf curl expect. */
  const withDependencies = (file: DescFile): Uint8Array[] => {
    const seen = new Set<string>();
    const out: Uint8Array[] = [];
    const walk = (f: DescFile): void => {
      if (seen.has(f.name)) return;
      seen.add(f.name);
      out.push(bytes.get(f.name) ?? toBinary(FileDescriptorProtoSchema, f.proto));
      f.dependencies.forEach(walk);
    };
    walk(file);
    return out;
  };
  return { files, symbols, withDependencies };
}

/**
 * Answers one reflection request. v1 and v1alpha share this: their messages are
 * identical on the wire, only the package differs.
 */
function answer(
  index: ReturnType<typeof indexFiles>,
  serviceNames: readonly string[],
  request: Request,
): Response {
  const base = { validHost: request.host, originalRequest: request };
  const files = (file: DescFile | undefined, what: string): Response =>
    file === undefined
      ? create(v1.ServerReflectionResponseSchema, {
          ...base,
          messageResponse: {
            case: "errorResponse",
            value: { errorCode: Code.NotFound, errorMessage: `${what} not found` },
          },
        })
      : create(v1.ServerReflectionResponseSchema, {
          ...base,
          messageResponse: {
            case: "fileDescriptorResponse",
            value: { fileDescriptorProto: index.withDependencies(file) },
          },
        });
  const { messageRequest } = request;
  switch (messageRequest.case) {
    case "listServices":
      return create(v1.ServerReflectionResponseSchema, {
        ...base,
        messageResponse: {
          case: "listServicesResponse",
          value: { service: serviceNames.map((name) => ({ name })) },
        },
      });
    case "fileByFilename":
      return files(index.files.get(messageRequest.value), `file ${messageRequest.value}`);
    case "fileContainingSymbol":
      return files(index.symbols.get(messageRequest.value), `symbol ${messageRequest.value}`);
    case "fileContainingExtension":
      return files(undefined, `extension of ${messageRequest.value.containingType}`);
    case "allExtensionNumbersOfType":
      return index.symbols.has(messageRequest.value)
        ? create(v1.ServerReflectionResponseSchema, {
            ...base,
            messageResponse: {
              case: "allExtensionNumbersResponse",
              value: { baseTypeName: messageRequest.value, extensionNumber: [] },
            },
          })
        : files(undefined, `type ${messageRequest.value}`);
    default:
      return create(v1.ServerReflectionResponseSchema, {
        ...base,
        messageResponse: {
          case: "errorResponse",
          value: { errorCode: Code.InvalidArgument, errorMessage: "empty reflection request" },
        },
      });
  }
}

/** The two reflection services (v1 and v1alpha) describing `services` and themselves. */
export function createReflection(services: readonly DescService[]): {
  v1: ServiceImpl<typeof v1.ServerReflection>;
  v1alpha: ServiceImpl<typeof v1alpha.ServerReflection>;
} {
  const described = [...services, v1.ServerReflection, v1alpha.ServerReflection];
  const index = indexFiles(described);
  const names = described.map((service) => service.typeName).sort();
  return {
    v1: {
      async *serverReflectionInfo(requests) {
        for await (const request of requests) yield answer(index, names, request);
      },
    },
    v1alpha: {
      async *serverReflectionInfo(requests) {
        for await (const request of requests) {
          const asV1 = fromBinary(
            v1.ServerReflectionRequestSchema,
            toBinary(v1alpha.ServerReflectionRequestSchema, request),
          );
          const reply = answer(index, names, asV1);
          yield fromBinary(
            v1alpha.ServerReflectionResponseSchema,
            toBinary(v1.ServerReflectionResponseSchema, reply),
          );
        }
      },
    },
  };
}
