/**
 * Benchmark fixture, not product code: the scoreboard's three RPCs served by
 * @grpc/grpc-js (stubs from the .proto at run time) from the same board file,
 * the same snapshot and the same lookups as the service. The reference the
 * service is measured against. Usage: grpc-js-reference.ts PORT BOARD_FILE
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { parseBoard } from "../src/snapshot/parse";
import { Snapshot } from "../src/snapshot/snapshot";

interface Handlers {
  [name: string]: grpc.UntypedHandleCall;
}

async function main(): Promise<void> {
  const [port, file] = process.argv.slice(2);
  if (port === undefined || file === undefined) throw new Error("usage: PORT BOARD_FILE");
  const snapshot = await Snapshot.build(parseBoard(readFileSync(file), { path: file }), 1n);
  const definition = protoLoader.loadSync(
    join(__dirname, "../../../proto/scoreboard/v1/scoreboard.proto"),
    { keepCase: false, longs: String, defaults: true },
  );
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    scoreboard: { v1: { ScoreboardService: grpc.ServiceClientConstructor } };
  };
  const invalid = (details: string) => ({ code: grpc.status.INVALID_ARGUMENT, details });
  const notFound = (details: string) => ({ code: grpc.status.NOT_FOUND, details });
  type Unary<Req> = grpc.handleUnaryCall<Req, unknown>;
  const listScoreboard: Unary<{ offset: number; limit: number }> = ({ request }, done) => {
    if (request.offset < 0) {
      done(invalid("offset must not be negative"));
      return;
    }
    if (request.limit < 0) {
      done(invalid("limit must not be negative"));
      return;
    }
    done(null, {
      entries: snapshot.page(request.offset, request.limit),
      total: snapshot.total,
      fetchedAt: snapshot.fetchedAt.toString(),
    });
  };
  const getByRank: Unary<{ rank: number }> = ({ request }, done) => {
    if (request.rank < 1) {
      done(invalid("rank must be 1 or greater"));
      return;
    }
    const entry = snapshot.byRank(request.rank);
    if (entry === undefined) {
      done(notFound(`rank ${request.rank} not found`));
      return;
    }
    done(null, entry);
  };
  const getByUsername: Unary<{ username: string }> = ({ request }, done) => {
    if (request.username === "") {
      done(invalid("username must not be empty"));
      return;
    }
    const entry = snapshot.byUsername(request.username);
    if (entry === undefined) {
      done(notFound(`username not found`));
      return;
    }
    done(null, entry);
  };
  const handlers: Handlers = {
    ListScoreboard: listScoreboard as grpc.UntypedHandleCall,
    GetByRank: getByRank as grpc.UntypedHandleCall,
    GetByUsername: getByUsername as grpc.UntypedHandleCall,
  };
  const server = new grpc.Server({ "grpc.max_send_message_length": -1 });
  server.addService(loaded.scoreboard.v1.ScoreboardService.service, handlers);
  server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (error) => {
    if (error !== null) throw error;
    process.stdout.write("listening\n");
  });
}

void main();
