import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { type Entry, ScoreboardService } from "@repo/proto-gen/scoreboard/v1";

/** Entries per page. */
const PAGE_SIZE = 50;

/**
 * The service's address: `?api=` in the page's URL, else the build's
 * VITE_SCOREBOARD_URL, else the page's own origin (`vite preview` and `vite`
 * proxy the service's paths to the scoreboard on port 50051).
 */
function serviceUrl(): string {
  const fromQuery = new URLSearchParams(location.search).get("api");
  const fromBuild = (import.meta as ImportMeta & { env: Record<string, string | undefined> }).env
    .VITE_SCOREBOARD_URL;
  return fromQuery ?? fromBuild ?? location.origin;
}

// Connect GET for every read (the service marks them side-effect free), so that
// the browser caches answers; "no-cache" revalidates each time with the
// service's ETag, which answers 304 while the board is unchanged.
const client = createClient(
  ScoreboardService,
  createConnectTransport({
    baseUrl: serviceUrl(),
    useHttpGet: true,
    fetch: (input, init) => fetch(input, { ...init, cache: "no-cache" }),
  }),
);

function element<T extends HTMLElement>(id: string, kind: new () => T): T {
  const found = document.getElementById(id);
  if (!(found instanceof kind)) throw new Error(`#${id} is missing from the page`);
  return found;
}

const view = {
  rows: element("rows", HTMLTableSectionElement),
  page: element("page", HTMLElement),
  fetched: element("fetched", HTMLElement),
  message: element("message", HTMLElement),
  previous: element("previous", HTMLButtonElement),
  next: element("next", HTMLButtonElement),
  form: element("find", HTMLFormElement),
  rank: element("rank", HTMLInputElement),
  username: element("username", HTMLInputElement),
};

let offset = 0;
let total = 0;

function say(text: string, kind: "info" | "error" = "info"): void {
  view.message.textContent = text;
  view.message.className = kind;
  view.message.hidden = text === "";
}

/** What a failed call means to a reader. */
function explain(error: unknown, notFound: string): string {
  const connectError = ConnectError.from(error);
  if (connectError.code === Code.NotFound) return notFound;
  if (connectError.code === Code.Unavailable)
    return "The scoreboard is not available right now (it is loading its data or restarting). Try again in a moment.";
  return `Could not read the scoreboard: ${connectError.rawMessage}`;
}

function cell(text: string, className?: string): HTMLTableCellElement {
  const td = document.createElement("td");
  td.textContent = text;
  if (className !== undefined) td.className = className;
  return td;
}

function render(entries: readonly Entry[], highlight: number | undefined): void {
  view.rows.replaceChildren(
    ...entries.map((entry) => {
      const tr = document.createElement("tr");
      tr.dataset.rank = String(entry.rank);
      if (entry.rank === highlight) tr.className = "found";
      tr.append(
        cell(String(entry.rank), "number"),
        cell(entry.username),
        cell(entry.country),
        cell(entry.grade),
        cell(entry.score.toLocaleString(), "number"),
      );
      return tr;
    }),
  );
}

/** Shows the page that starts at `start`, highlighting `highlight`'s row. */
async function show(start: number, highlight?: number): Promise<void> {
  try {
    const page = await client.listScoreboard({ offset: start, limit: PAGE_SIZE });
    offset = start;
    total = page.total;
    render(page.entries, highlight);
    const last = Math.min(offset + page.entries.length, total);
    view.page.textContent = total === 0 ? "No entries" : `Ranks ${offset + 1}–${last} of ${total}`;
    const fetchedAt = new Date(Number(page.fetchedAt) * 1000);
    view.fetched.replaceChildren(
      "Updated ",
      Object.assign(document.createElement("time"), {
        dateTime: fetchedAt.toISOString(),
        textContent: fetchedAt.toLocaleString(undefined, {
          year: "numeric",
          month: "short",
          day: "numeric",
          hour: "numeric",
          minute: "2-digit",
          timeZoneName: "short",
        }),
      }),
    );
    view.previous.disabled = offset === 0;
    view.next.disabled = offset + PAGE_SIZE >= total;
  } catch (error) {
    say(explain(error, "Nothing to show."), "error");
  }
}

/** Goes to the page holding `entry`. */
async function reveal(entry: Entry): Promise<void> {
  say("");
  await show(Math.floor((entry.rank - 1) / PAGE_SIZE) * PAGE_SIZE, entry.rank);
}

view.previous.addEventListener("click", () => {
  say("");
  void show(Math.max(0, offset - PAGE_SIZE));
});
view.next.addEventListener("click", () => {
  say("");
  void show(offset + PAGE_SIZE);
});
view.form.addEventListener("submit", (event) => {
  event.preventDefault();
  const submitter = event.submitter as HTMLButtonElement | null;
  if (submitter?.value === "username") {
    const username = view.username.value.trim();
    if (username === "") return;
    client.getByUsername({ username }).then(reveal, (error: unknown) => {
      say(explain(error, `No user named "${username}".`), "error");
    });
    return;
  }
  const rank = Number(view.rank.value);
  if (!Number.isInteger(rank) || rank < 1) {
    say("A rank is a whole number from 1.", "error");
    return;
  }
  client.getByRank({ rank }).then(reveal, (error: unknown) => {
    say(explain(error, `No entry has rank ${rank}.`), "error");
  });
});

void show(0);
