import { readFileSync } from "node:fs";
import path from "node:path";
import { JsonableError } from "@repo/envelope";
import {
  EMPTY_CONTEXT,
  RENDER_TIMEOUT_MESSAGE,
  type RenderContext,
  renderMarkdown,
} from "../src/lib/markdown";

/**
 * The renderer against Zulip's own Markdown test data: every case of
 * fixtures/zulip-markdown/markdown-test-cases.json (transcribed from Zulip's
 * markdown_test_cases.json, the cases this renderer implements) renders to
 * exactly the HTML Zulip expects, and the file accounts for every case of
 * Zulip's (those left out named with their reason). Then Zulip's syntax of
 * the realm: mentions, channel links, linkifiers; and the time limit.
 */
interface Case {
  name: string;
  input: string;
  expected_output: string;
  /** The author's `translate_emoticons` (Zulip's case field), off when absent. */
  translate_emoticons?: boolean;
}

const fixture = JSON.parse(
  readFileSync(path.join(__dirname, "fixtures/zulip-markdown/markdown-test-cases.json"), "utf8"),
) as {
  source: { regular_tests: number; linkify_tests: number };
  cases: Case[];
  left_out: { name: string; reason: string }[];
};
const { cases } = fixture;

/** Left out because they need a service outside the renderer (image previews). */
const needsAService = fixture.left_out.filter((c) => c.reason.includes("an external service"));

describe("Zulip's Markdown test cases", () => {
  it("account for every case of Zulip's file, once", () => {
    const names = [...cases, ...fixture.left_out].map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toHaveLength(fixture.source.regular_tests + fixture.source.linkify_tests);
  });

  it("pass for at least 80 % of the cases that need no external service", () => {
    const total = cases.length + fixture.left_out.length - needsAService.length;
    expect(cases.length / total).toBeGreaterThanOrEqual(0.8);
  });

  it.each(cases.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const context = { ...EMPTY_CONTEXT, translateEmoticons: c.translate_emoticons === true };
    expect(renderMarkdown(c.input, context).html).toBe(c.expected_output);
  });
});

const realm: RenderContext = {
  people: [
    { id: 10, full_name: "King Hamlet" },
    { id: 11, full_name: "Othello, the Moor of Venice" },
    { id: 12, full_name: "<b>Bold</b> Name" },
    { id: 13, full_name: "King Hamlet" },
  ],
  groups: [{ id: 20, name: "actors" }],
  channels: [
    { id: 30, name: "Denmark" },
    { id: 31, name: "core team" },
  ],
  linkifiers: [
    { pattern: "#(?P<id>[0-9]+)", url_template: "https://trac.example.com/ticket/{id}" },
    { pattern: "#1(?P<id>[0-9]+)", url_template: "https://never.example.com/{id}" },
    { pattern: "RFC(?P<rfc>[0-9]+)", url_template: "https://www.rfc-editor.org/rfc/rfc{rfc}" },
  ],
  customEmoji: [{ name: "party_parrot", source_url: "/user_avatars/2/emoji/images/7.gif" }],
  translateEmoticons: false,
};

const render = (content: string) => renderMarkdown(content, realm);

describe("Zulip's syntax of the realm", () => {
  it("shows the realm's custom emoji as Zulip's image, and unknown names as text", () => {
    expect(render(":party_parrot: and :smile: but :parrot_party:").html).toBe(
      '<p><img alt=":party_parrot:" class="emoji" src="/user_avatars/2/emoji/images/7.gif" title="party parrot"> and ' +
        '<span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span> but :parrot_party:</p>',
    );
    // Not in code.
    expect(render("`:party_parrot:`").html).toBe("<p><code>:party_parrot:</code></p>");
  });

  it("translates emoticons only for authors who turned translate_emoticons on", () => {
    expect(render("Hi :) <3").html).toBe("<p>Hi :) &lt;3</p>");
    expect(renderMarkdown("Hi :D <3", { ...realm, translateEmoticons: true }).html).toBe(
      '<p>Hi <span aria-label="grinning" class="emoji emoji-1f600" role="img" title="grinning">:grinning:</span> ' +
        '<span aria-label="heart" class="emoji emoji-2764" role="img" title="heart">:heart:</span></p>',
    );
  });

  it("mentions people by name or by id, silently or not; unknown names stay text", () => {
    const result = render(
      "@**King Hamlet|13** and @_**Othello, the Moor of Venice** and @**Nobody** and @**<b>Bold</b> Name**",
    );
    expect(result.html).toBe(
      '<p><span class="user-mention" data-user-id="13">@King Hamlet</span> and ' +
        '<span class="user-mention silent" data-user-id="11">Othello, the Moor of Venice</span> and ' +
        "@<strong>Nobody</strong> and " +
        '<span class="user-mention" data-user-id="12">@&lt;b&gt;Bold&lt;/b&gt; Name</span></p>',
    );
    // Silent mentions notify no one.
    expect([...result.mentionedUserIds].sort()).toEqual([12, 13]);
    expect(result.wildcard).toBeUndefined();
  });

  it("mentions everyone (all, everyone, channel, stream) or the topic, and groups", () => {
    expect(render("@**all**").wildcard).toBe("channel");
    expect(render("@**everyone** hi").html).toBe(
      '<p><span class="user-mention channel-wildcard-mention" data-user-id="*">@everyone</span> hi</p>',
    );
    const topic = render("@**topic**");
    expect([topic.wildcard, topic.html]).toEqual([
      "topic",
      '<p><span class="topic-mention">@topic</span></p>',
    ]);
    expect(render("@_**all**").wildcard).toBeUndefined();
    const group = render("@*actors* and @_*actors*");
    expect(group.html).toBe(
      '<p><span class="user-group-mention" data-user-group-id="20">@actors</span> and ' +
        '<span class="user-group-mention silent" data-user-group-id="20">actors</span></p>',
    );
    expect([...group.mentionedGroupIds]).toEqual([20]);
  });

  it("links channels and topics", () => {
    expect(render("#**Denmark** and #**core team>plans & schemes**").html).toBe(
      '<p><a class="stream" data-stream-id="30" href="/#narrow/channel/30-Denmark">#Denmark</a> and ' +
        '<a class="stream-topic" data-stream-id="31" href="/#narrow/channel/31-core-team/topic/plans.20.26.20schemes">#core team &gt; plans &amp; schemes</a></p>',
    );
    expect(render("#**Elsinore**").html).toBe("<p>#<strong>Elsinore</strong></p>");
  });

  it("applies linkifiers in the realm's order, not inside words, code or links", () => {
    expect(render("See #123, RFC2119 and abc#45 `#67` [#89](https://x.example)").html).toBe(
      '<p>See <a href="https://trac.example.com/ticket/123">#123</a>, ' +
        '<a href="https://www.rfc-editor.org/rfc/rfc2119">RFC2119</a> and abc#45 <code>#67</code> ' +
        '<a href="https://x.example">#89</a></p>',
    );
  });

  it("runs a linkifier pattern that would backtrack for ever in linear time (RE2)", () => {
    const hostile: RenderContext = {
      ...EMPTY_CONTEXT,
      linkifiers: [{ pattern: "(a+)+$", url_template: "https://x.example/{id}" }],
    };
    const content = `${"a".repeat(5000)}!`;
    expect(renderMarkdown(content, hostile).html).toBe(`<p>${content}</p>`);
  });

  it("shows times and refuses what is not one", () => {
    expect(render("<time:2020-07-15T20:40:00+02:00>").html).toBe(
      '<p><time datetime="2020-07-15T18:40:00Z">2020-07-15T20:40:00+02:00</time></p>',
    );
  });

  it("never passes HTML or a script URL through", () => {
    expect(render('<img src=x onerror="alert(1)"> [x](javascript:alert(1))').html).toBe(
      '<p>&lt;img src=x onerror="alert(1)"&gt; [x](javascript:alert(1))</p>',
    );
  });

  it("gives up past its time limit with Zulip's error, and renders the same text within it", () => {
    const content = "**a** #1 ".repeat(1000);
    const outOfTime = () => renderMarkdown(content, realm, -1);
    expect(outOfTime).toThrow(JsonableError);
    expect(outOfTime).toThrow(RENDER_TIMEOUT_MESSAGE);
    expect(renderMarkdown(content, realm).html).toContain("<strong>a</strong>");
  });

  it("nests list items indented by two spaces, but leaves fenced code as typed", () => {
    expect(render("1. A\n  2. B").html).toBe(
      '<ol>\n<li>A<ol start="2">\n<li>B</li>\n</ol>\n</li>\n</ol>',
    );
    expect(render("```\n1. A\n  2. B\n```").html).toBe(
      '<div class="codehilite"><pre><span></span><code>1. A\n  2. B\n</code></pre></div>',
    );
  });

  it("renders TeX with KaTeX, and what KaTeX refuses as Zulip's error markup", () => {
    expect(render("$$x^2$$").html).toContain(
      '<annotation encoding="application/x-tex">x^2</annotation>',
    );
    expect(render("$$\\notacommand$$").html).toBe(
      '<p><span class="tex-error">$$\\notacommand$$</span></p>',
    );
  });
});
