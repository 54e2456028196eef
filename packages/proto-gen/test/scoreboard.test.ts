import { create, fromBinary, fromJson, toBinary, toJson } from "@bufbuild/protobuf";
import {
  EntrySchema,
  ListScoreboardResponseSchema,
  ScoreboardService,
} from "@repo/proto-gen/scoreboard/v1";
import { HealthCheckResponse_ServingStatus, Health } from "@repo/proto-gen/grpc/health/v1";
import { ServerReflection as ReflectionV1 } from "@repo/proto-gen/grpc/reflection/v1";
import { ServerReflection as ReflectionV1alpha } from "@repo/proto-gen/grpc/reflection/v1alpha";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";

const entry = create(EntrySchema, {
  rank: 3,
  username: "Ünïcode_ユーザー",
  profilePath: "/u/unicode",
  country: "JP",
  grade: "A+",
  score: -2147483648,
});

describe("scoreboard.v1.Entry", () => {
  it("round-trips through the binary wire format with the spec's field numbers", () => {
    const bytes = toBinary(EntrySchema, entry);
    // Field 1 (rank), varint: tag byte 0x08 then 3.
    expect(Array.from(bytes.subarray(0, 2))).toEqual([0x08, 0x03]);
    // Field 6 (score), varint: tag byte 0x30.
    expect(bytes.includes(0x30)).toBe(true);
    expect(fromBinary(EntrySchema, bytes)).toEqual(entry);
  });

  it("round-trips through the proto3 JSON mapping with lowerCamelCase names", () => {
    const json = toJson(EntrySchema, entry);
    expect(json).toEqual({
      rank: 3,
      username: "Ünïcode_ユーザー",
      profilePath: "/u/unicode",
      country: "JP",
      grade: "A+",
      score: -2147483648,
    });
    expect(fromJson(EntrySchema, json)).toEqual(entry);
    // Parsers also accept the original snake_case field names.
    expect(fromJson(EntrySchema, { profile_path: "/x" }).profilePath).toBe("/x");
  });

  it("encodes fetched_at as int64: a bigint in code and a decimal string in JSON", () => {
    const response = create(ListScoreboardResponseSchema, {
      entries: [entry],
      total: 1,
      fetchedAt: 1_700_000_000n,
    });
    const json = toJson(ListScoreboardResponseSchema, response);
    expect(json).toMatchObject({ total: 1, fetchedAt: "1700000000" });
    expect(
      fromBinary(ListScoreboardResponseSchema, toBinary(ListScoreboardResponseSchema, response)),
    ).toEqual(response);
  });
});

describe("generated services", () => {
  it("declares the three scoreboard RPCs as free of side effects", () => {
    expect(ScoreboardService.typeName).toBe("scoreboard.v1.ScoreboardService");
    const methods = ScoreboardService.methods.map((m) => [m.name, m.idempotency]);
    expect(methods).toEqual([
      ["ListScoreboard", MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS],
      ["GetByRank", MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS],
      ["GetByUsername", MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS],
    ]);
  });

  it("includes grpc.health.v1 and both reflection versions", () => {
    expect(Health.typeName).toBe("grpc.health.v1.Health");
    expect(Health.methods.map((m) => m.name).sort()).toEqual(["Check", "List", "Watch"]);
    expect(HealthCheckResponse_ServingStatus.SERVING).toBe(1);
    expect(ReflectionV1.typeName).toBe("grpc.reflection.v1.ServerReflection");
    expect(ReflectionV1alpha.typeName).toBe("grpc.reflection.v1alpha.ServerReflection");
  });
});
