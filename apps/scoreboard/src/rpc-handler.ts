import http from "node:http";
import http2 from "node:http2";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type ConnectRouterOptions,
  createConnectRouter,
} from "@connectrpc/connect";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import type { Logger } from "pino";

/** A request and its response, over HTTP/1.1 or HTTP/2. */
export type NodeRequest = http.IncomingMessage | http2.Http2ServerRequest;
/** The response half of {@link NodeRequest}. */
export type NodeResponse = http.ServerResponse | http2.Http2ServerResponse;

/**
 * connect-node's adapter, with a fault boundary: when writing a response fails
 * half-way, connectNodeAdapter prints to the console and leaves the response
 * open, so an HTTP/1.1 client waits forever. Here the failure is logged and the
 * exchange is cut (RST_STREAM on HTTP/2, the socket on HTTP/1.1), which every
 * client reads as an error at once.
 */
export function createRpcHandler(
  routes: (router: ConnectRouter) => void,
  options: ConnectRouterOptions & { logger: Logger },
): (req: NodeRequest, res: NodeResponse) => void {
  const { logger, ...routerOptions } = options;
  const router = createConnectRouter({
    acceptCompression: [compressionGzip, compressionBrotli],
    ...routerOptions,
  });
  routes(router);
  const handlers = new Map(router.handlers.map((handler) => [handler.requestPath, handler]));

  return (req, res) => {
    const path = req.url?.split("?", 1)[0] ?? "";
    const handler = handlers.get(path);
    if (handler === undefined) {
      res.statusCode = 404;
      res.end();
      return;
    }
    handler(universalRequestFromNodeRequest(req, res, undefined, undefined))
      .then((answer) => universalResponseToNodeResponse(answer, res))
      .catch((reason: unknown) => {
        if (ConnectError.from(reason).code === Code.Aborted) return; // the client went away
        logger.error({ err: reason, path }, "a call failed while its answer was written");
        cut(res);
      });
  };
}

/** Ends an exchange whose answer cannot be completed. */
function cut(res: NodeResponse): void {
  if (res instanceof http2.Http2ServerResponse) {
    if (!res.stream.destroyed) res.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
  } else if (!res.writableEnded) {
    res.destroy();
  }
}
