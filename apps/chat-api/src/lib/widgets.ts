/**
 * Zulip's widgets: a message whose first word is `/poll` or `/todo` gets a
 * widget, its first submessage, when it is sent (`actions/messages.ts`);
 * changes come later through POST /submessage (`actions/widgets.ts`).
 */

/** A widget as its first submessage holds it. */
export type Widget =
  | { widget_type: "poll"; extra_data: { question: string; options: string[] } }
  | {
      widget_type: "todo";
      extra_data: { task_list_title: string; tasks: { task: string; desc: string }[] };
    };

/** The lines after a widget's first line, without list markers, blank ones dropped. */
const itemLines = (lines: readonly string[]): string[] =>
  lines.map((line) => line.trim().replace(/^\s*[-*]?\s*/, "")).filter((line) => line !== "");

/**
 * The widget a message's content makes (Zulip's rules): `/poll question`
 * then an option per line; `/todo title` then a task per line, `task: what`.
 */
export function widgetOf(content: string): Widget | undefined {
  const [first = ""] = content.split(/\s+/, 1);
  if (first !== "/poll" && first !== "/todo") return undefined;
  const [head = "", ...rest] = content.slice(first.length).split(/\r?\n/);
  const title = head.trim();
  if (first === "/poll")
    return { widget_type: "poll", extra_data: { question: title, options: itemLines(rest) } };
  return {
    widget_type: "todo",
    extra_data: {
      task_list_title: title,
      tasks: itemLines(rest).map((line) => {
        const at = line.indexOf(": ");
        return at < 0
          ? { task: line.trim(), desc: "" }
          : { task: line.slice(0, at).trim(), desc: line.slice(at + 2).trim() };
      }),
    },
  };
}
