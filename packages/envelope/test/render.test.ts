import {
  BadEventQueueIdError,
  ErrorCode,
  JsonableError,
  MethodNotAllowedError,
  OrganizationAdministratorRequiredError,
  RateLimitedError,
  RequestConfusingVarError,
  RequestVariableMissingError,
  ResourceNotFoundError,
  UnauthorizedError,
  renderError,
  renderSuccess,
} from "@repo/envelope";

describe("renderSuccess", () => {
  it("puts result and msg first, then the data, in order", () => {
    const body = renderSuccess({ id: 7, name: "x" });
    expect(JSON.stringify(body)).toBe('{"result":"success","msg":"","id":7,"name":"x"}');
  });

  it("omits ignored_parameters_unsupported when nothing was ignored", () => {
    expect(renderSuccess({}, [])).not.toHaveProperty("ignored_parameters_unsupported");
  });

  it("lists ignored parameters sorted, after the data", () => {
    const body = renderSuccess({ ids: [1] }, ["zeta", "alpha"]);
    expect(JSON.stringify(body)).toBe(
      '{"result":"success","msg":"","ids":[1],"ignored_parameters_unsupported":["alpha","zeta"]}',
    );
  });

  it("cannot be made to say anything but success by its data", () => {
    const body = renderSuccess({ result: "error", msg: "boom", code: "X", n: 1 });
    expect(JSON.stringify(body)).toBe('{"result":"success","msg":"","n":1}');
  });
});

describe("renderError", () => {
  it("renders a JsonableError as a 400 BAD_REQUEST by default", () => {
    const { status, headers, body } = renderError(new JsonableError("Invalid channel ID"));
    expect(status).toBe(400);
    expect(headers).toEqual({});
    expect(JSON.stringify(body)).toBe(
      '{"result":"error","msg":"Invalid channel ID","code":"BAD_REQUEST"}',
    );
  });

  it("adds var_name to a missing-argument error", () => {
    expect(renderError(new RequestVariableMissingError("draft")).body).toEqual({
      result: "error",
      msg: "Missing 'draft' argument",
      code: "REQUEST_VARIABLE_MISSING",
      var_name: "draft",
    });
  });

  it("names both aliases of a confusing parameter", () => {
    expect(renderError(new RequestConfusingVarError("stream", "stream_id")).body).toMatchObject({
      code: ErrorCode.REQUEST_CONFUSING_VAR,
      msg: "Can't decide between 'stream' and 'stream_id' arguments",
    });
  });

  it("answers a missing caller-owned object with 404 and BAD_REQUEST", () => {
    const { status, body } = renderError(new ResourceNotFoundError("Draft does not exist"));
    expect(status).toBe(404);
    expect(body.code).toBe("BAD_REQUEST");
  });

  it("sends WWW-Authenticate with every 401", () => {
    const { status, headers, body } = renderError(new UnauthorizedError("Invalid API key"));
    expect(status).toBe(401);
    expect(headers["WWW-Authenticate"]).toBe('Basic realm="zulip"');
    expect(body.code).toBe("UNAUTHORIZED");
  });

  it("uses UNAUTHORIZED_PRINCIPAL for admin-only operations", () => {
    expect(renderError(new OrganizationAdministratorRequiredError()).body).toEqual({
      result: "error",
      msg: "Must be an organization administrator",
      code: "UNAUTHORIZED_PRINCIPAL",
    });
  });

  it("renders the rate-limit error with a fractional retry-after and a whole Retry-After", () => {
    const { status, headers, body } = renderError(
      new RateLimitedError(1.25, { "X-RateLimit-Remaining": "0" }),
    );
    expect(status).toBe(429);
    expect(body).toMatchObject({ code: "RATE_LIMIT_HIT", "retry-after": 1.25 });
    expect(headers).toEqual({ "Retry-After": "2", "X-RateLimit-Remaining": "0" });
  });

  it("carries queue_id for a bad event queue", () => {
    expect(renderError(new BadEventQueueIdError("abc")).body).toEqual({
      result: "error",
      msg: "Bad event queue ID: abc",
      code: "BAD_EVENT_QUEUE_ID",
      queue_id: "abc",
    });
  });

  it("renders 405 without a code, with allowed_methods and Allow", () => {
    const { status, headers, body } = renderError(new MethodNotAllowedError(["GET", "HEAD"]));
    expect(status).toBe(405);
    expect(headers).toEqual({ Allow: "GET, HEAD" });
    expect(JSON.stringify(body)).toBe(
      '{"result":"error","msg":"Method Not Allowed","allowed_methods":["GET","HEAD"]}',
    );
  });

  it("never lets extra fields replace result, msg or code", () => {
    const error = new JsonableError("real", ErrorCode.BAD_REQUEST, 400, {
      result: "success",
      msg: "fake",
      code: "FAKE",
      extra: 1,
    });
    expect(renderError(error).body).toEqual({
      result: "error",
      msg: "real",
      code: "BAD_REQUEST",
      extra: 1,
    });
  });

  it.each([
    new Error('relation "users" does not exist'),
    new TypeError("Cannot read properties of undefined"),
    "a thrown string",
    undefined,
  ])("turns anything else (%p) into the plain 500 with no detail", (thrown) => {
    const { status, body } = renderError(thrown);
    expect(status).toBe(500);
    expect(JSON.stringify(body)).toBe('{"result":"error","msg":"Internal server error"}');
  });
});
