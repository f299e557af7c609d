// A client that follows /v1/version/stream instead of polling: each event says a
// version became active (with its diff's counts), and the client then applies it
// with sync.ts's poll. The stream is read with fetch, so a User-Agent can be set
// (a browser's EventSource cannot); when it ends — the server ends streams after a
// while and at shutdown — the client reconnects with Last-Event-ID, so it gets an
// event only for a version it has not seen.
import type { components } from "../gen/schema";
import { poll, type Cache, type Client, type PollResult } from "./sync";

/** An event's data, typed from the spec. */
export type VersionEvent = components["schemas"]["VersionEvent"];

/** One Server-Sent Event: its id and data (the event name is always "version"). */
export interface StreamEvent {
  id: string;
  event: VersionEvent;
}

/** parseEvents splits a text/event-stream buffer into whole events and the rest. */
export function parseEvents(buffer: string): { events: StreamEvent[]; rest: string } {
  const events: StreamEvent[] = [];
  const blocks = buffer.split("\n\n");
  const rest = blocks.pop() ?? "";
  for (const block of blocks) {
    let id = "";
    let data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("id: ")) id = line.slice(4);
      else if (line.startsWith("data: ")) data += line.slice(6);
      // ": keep-alive" comments and "event: version" need nothing
    }
    if (data) events.push({ id, event: JSON.parse(data) as VersionEvent });
  }
  return { events, rest };
}

/**
 * follow reads the stream until signal aborts, calling onEvent for each version
 * activated and applying it to cache; it reconnects after the stream ends or
 * fails (after retryMs), resuming after the last event it saw.
 */
export async function follow(
  c: Client,
  cache: Cache,
  onEvent: (e: StreamEvent, applied: PollResult) => void,
  signal: AbortSignal,
  retryMs = 3000,
): Promise<void> {
  let lastId = cache.manifestId;
  while (!signal.aborted) {
    try {
      const headers: Record<string, string> = { "User-Agent": c.userAgent, Accept: "text/event-stream" };
      if (lastId) headers["Last-Event-ID"] = lastId;
      const res = await fetch(c.base + "/v1/version/stream", { headers, signal });
      if (res.ok && res.body) {
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          const parsed = parseEvents(buffer + value);
          buffer = parsed.rest;
          for (const e of parsed.events) {
            lastId = e.id;
            onEvent(e, await poll(c, cache));
          }
        }
      }
      // 503 (no version yet, or the server holds all it takes: Retry-After) and
      // the stream's end alike: wait, then reconnect.
    } catch (e) {
      if (signal.aborted) return;
    }
    await new Promise((resolve) => setTimeout(resolve, retryMs));
  }
}

/** How many items an event says changed, over every catalog. */
export function changedItems(e: VersionEvent): number {
  if (!e.diff) return 0;
  return Object.values(e.diff.categories).reduce((n, c) => n + c.added + c.removed + c.changed, 0);
}

// The event's types are the spec's: tsc fails here if the schema loosens.
// @ts-expect-error an event's diff counts are numbers
export const typedCount: NonNullable<VersionEvent["diff"]>["summary"]["totalAdded"] = "1";
