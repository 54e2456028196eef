import http from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";
import { createApp, securityHeaders } from "../src/app";
import { dispatcher } from "../src/dispatch";
import { pollLane } from "../src/poll-lane";
import { buildApi } from "../src/urls";
import { type Cast, ROOT_HOST, type TestServer, loadCast, startTestServer } from "./support/server";

/**
 * The poll lane (src/poll-lane.ts) answers `GET /api/v1/events` without
 * Express. Two servers over the same services: one whose requests reach
 * only the lane (a request it does not take is answered 599 here), one with
 * Express alone. Every request the lane takes must get the bytes Express
 * gives; every request it must leave to Express must not be taken.
 */
let server: TestServer;
let cast: Cast;
let laneOnly: http.Server;
let expressOnly: http.Server;
let queueId: string;
let othersQueue: string;

const NOT_TAKEN = 599;

async function listen(handler: http.RequestListener): Promise<http.Server> {
  const listening = http.createServer(handler);
  await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", resolve));
  return listening;
}

const portOf = (s: http.Server) => (s.address() as AddressInfo).port;

beforeAll(async () => {
  server = await startTestServer({ env: { CHAT_EVENT_HEARTBEAT_SECONDS: "1" } });
  cast = await loadCast(server, ["hamlet", "othello"]);
  const { services } = server;
  const api = buildApi(services);
  const lane = pollLane(services, dispatcher(services, api), securityHeaders(services));
  laneOnly = await listen((req, res) => {
    if (!lane(req, res)) res.writeHead(NOT_TAKEN).end();
  });
  expressOnly = await listen(createApp(services, api, { pollLane: false }));
  const registered = await server.call("POST", "/api/v1/register", {
    ...cast.as("hamlet"),
    form: { event_types: JSON.stringify(["message", "heartbeat"]) },
  });
  queueId = String(registered.body.queue_id);
  const others = await server.call("POST", "/api/v1/register", cast.as("othello"));
  othersQueue = String(others.body.queue_id);
  for (const content of ["first", "second **bold**"]) {
    const sent = await server.call("POST", "/api/v1/messages", {
      ...cast.as("othello"),
      form: { type: "stream", to: "Denmark", topic: "lane", content },
    });
    expect(sent.status).toBe(200);
  }
});

afterAll(async () => {
  await new Promise((resolve) => laneOnly.close(resolve));
  await new Promise((resolve) => expressOnly.close(resolve));
  await server.close();
});

interface Sent {
  path: string;
  method?: "GET" | "POST" | "HEAD";
  headers?: Record<string, string>;
  body?: string;
}

interface Answer {
  status: number;
  headers: [string, string][];
  body: string;
}

/** Headers whose values differ between two calls whatever the path: the date, rate-limit counts. */
const VARYING = new Set(["date", "x-ratelimit-remaining", "x-ratelimit-reset"]);

async function send(to: http.Server, sent: Sent): Promise<Answer> {
  const headers: Record<string, string> = { host: ROOT_HOST, ...sent.headers };
  const response = await request(`http://127.0.0.1:${String(portOf(to))}${sent.path}`, {
    method: sent.method ?? "GET",
    headers,
    ...(sent.body === undefined ? {} : { body: sent.body }),
  });
  const body = await response.body.text();
  // A request id is the client's when it was a valid one, else a fresh one each time.
  const given = headers["x-request-id"];
  return {
    status: response.statusCode,
    // In the order they came (undici keeps it), values that vary from call to call masked.
    headers: Object.entries(response.headers).map(([name, value]): [string, string] => [
      name,
      VARYING.has(name) || (name === "x-request-id" && value !== given) ? "*" : String(value),
    ]),
    // A heartbeat's id is a fresh one each time.
    body: body.replace(/"type":"heartbeat","id":\d+/, '"type":"heartbeat","id":"*"'),
  };
}

const basic = (email: string, key: string) =>
  `Basic ${Buffer.from(`${email}:${key}`).toString("base64")}`;

function hamlet(): Record<string, string> {
  const [email, key] = cast.as("hamlet").auth;
  return { authorization: basic(email, key) };
}

/** The requests the lane must take: well-formed and hostile polls. */
function takenCases(): Sent[] {
  const q = encodeURIComponent(queueId);
  const auth = hamlet();
  const paths = [
    `/api/v1/events?queue_id=${q}&last_event_id=-1&dont_block=true`,
    `/api/v1/events?queue_id=${q}&dont_block=true`,
    `/api/v1/events?queue_id=${q}&last_event_id=-1&dont_block=true&extra=1&zeta=2`,
    `/api/v1/events?queue_id=${q}&queue_id=${q}&dont_block=true&dont_block=true`,
    `/api/v1/events?queue%5Fid=${q}&dont_block=%74rue`,
    `/api/v1/events?queue_id=${q}&last_event_id=abc&dont_block=true`,
    `/api/v1/events?queue_id=${q}&last_event_id=-2&dont_block=true`,
    `/api/v1/events?queue_id=${q}&last_event_id=1.5&dont_block=true`,
    `/api/v1/events?queue_id=${q}&last_event_id=99999999999999999999999&dont_block=true`,
    `/api/v1/events?queue_id=${q}&dont_block=maybe`,
    `/api/v1/events?queue_id=${q}&dont_block=`,
    `/api/v1/events?queue_id=nope&dont_block=true`,
    `/api/v1/events?queue_id=${encodeURIComponent(othersQueue)}&dont_block=true`,
    `/api/v1/events?queue_id=%zz&dont_block=true`,
    `/api/v1/events?queue_id=a+b%20c&dont_block=true`,
    `/api/v1/events?queue_id=${"x".repeat(5000)}&dont_block=true`,
    `/api/v1/events?last_event_id[]=1&queue_id[]=x`,
    `/api/v1/events?&&=&==&queue_id`,
    "/api/v1/events?",
    "/api/v1/events",
    // Waits one heartbeat (1 s here) and answers it.
    `/api/v1/events?queue_id=${q}&last_event_id=1000000000`,
  ];
  const cases: Sent[] = paths.map((path) => ({ path, headers: auth }));
  const good = `/api/v1/events?queue_id=${q}&dont_block=true`;
  const [email, key] = cast.as("hamlet").auth;
  for (const authorization of [
    "",
    "Bearer abc",
    "Basic !!!",
    "Basic " + Buffer.from("no-colon").toString("base64"),
    basic(email, "a".repeat(32)),
    basic("someone@example.com", key),
    basic(email, key.slice(0, 10)),
  ])
    cases.push({ path: good, headers: authorization === "" ? {} : { authorization } });
  cases.push(
    { path: good, headers: { ...auth, "x-request-id": "client-chosen.id-1" } },
    { path: good, headers: { ...auth, "x-request-id": "not valid!" } },
    { path: good, headers: { ...auth, host: "nowhere.example.com" } },
    { path: good, headers: { ...auth, host: `zephyr.${ROOT_HOST}` } },
    { path: good, headers: { ...auth, accept: "text/html", "user-agent": "ZulipMobile/27.1" } },
  );
  return cases;
}

describe("the poll lane", () => {
  it("takes plain polls and answers each with Express's bytes", async () => {
    const answers: Answer[] = [];
    for (const sent of takenCases()) {
      const ours = await send(laneOnly, sent);
      const theirs = await send(expressOnly, sent);
      expect({ sent, answer: ours }).toEqual({ sent, answer: theirs });
      expect(ours.status).not.toBe(NOT_TAKEN);
      answers.push(ours);
    }
    // The cases cover answers with events, errors of every step and a heartbeat.
    const statuses = new Set(answers.map((a) => a.status));
    expect([...statuses].sort()).toEqual([200, 400, 401]);
    const bodies = answers.map((a) => JSON.parse(a.body) as Record<string, unknown>);
    expect(bodies.some((b) => Array.isArray(b.events) && b.events.length === 2)).toBe(true);
    expect(answers.some((a) => a.body.includes('"events":[{"type":"heartbeat"'))).toBe(true);
    expect(bodies.some((b) => b.code === "BAD_EVENT_QUEUE_ID")).toBe(true);
    expect(bodies.some((b) => Array.isArray(b.ignored_parameters_unsupported))).toBe(true);
  });

  it("leaves every other request to Express", async () => {
    const q = encodeURIComponent(queueId);
    const auth = hamlet();
    const left: Sent[] = [
      { path: `/api/v1/events?queue_id=${q}`, method: "HEAD", headers: auth },
      { path: `/api/v1/events?queue_id=${q}`, method: "POST", headers: auth },
      { path: `/api/v1/events/?queue_id=${q}`, headers: auth },
      { path: `/api/v1/eventsx?queue_id=${q}`, headers: auth },
      { path: `/API/v1/events?queue_id=${q}`, headers: auth },
      { path: `/api/v1/events?queue_id=${q}`, headers: { ...auth, origin: "https://a.example" } },
      {
        path: `/api/v1/events?queue_id=${q}`,
        headers: { ...auth, "content-type": "application/x-www-form-urlencoded" },
        body: "dont_block=true",
      },
      { path: "/api/v1/users/me", headers: auth },
    ];
    for (const sent of left) expect((await send(laneOnly, sent)).status).toBe(NOT_TAKEN);
  });
});
