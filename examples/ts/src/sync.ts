// A client that keeps a local copy of refdata current: it polls /v1/version
// (If-None-Match, so an unchanged version costs a 304), and when the manifest
// changes it applies the diff from its version to the new one — deleting what was
// removed, fetching what was added or changed — instead of downloading everything.
// Every type comes from openapi.yaml (openapi-typescript → gen/schema.d.ts).
import type { components, operations, paths } from "../gen/schema";

type Json<R> = R extends { content: { "application/json": infer B } } ? B : never;

export type VersionBody = Json<operations["getVersion"]["responses"][200]>;
export type DiffBody = Json<operations["getDiff"]["responses"][200]>;
export type ErrorBody = components["schemas"]["Error"];
/** A catalog, named by its path after /v1/ ("weapons/skins"), as diffs name them. */
export type Category = keyof components["schemas"]["DiffCategories"];

/** The item type a catalog serves, from its by-UUID route: ItemOf<"maps"> is a Map. */
type Data<B> = B extends { data: infer D } ? D : never;
/** A body of whole items: an answer cut to some fields (?fields=) names them in `fields`. */
type Whole<B> = B extends { fields: unknown } ? never : B;
export type ItemOf<C extends Category> = Data<Whole<Json<paths[`/v1/${C}/{uuid}` & keyof paths]["get"]["responses"][200]>>>;

/** The local copy: every item of every catalog, by uuid, and the version it is. */
export interface Cache {
  manifestId: string | null;
  etag: string | null;
  items: { [C in Category]?: Map<string, ItemOf<C>> };
}

export class ApiError extends Error {
  constructor(readonly status: number, readonly body: ErrorBody | null) {
    super(body ? `${status}: ${body.error}` : `status ${status}`);
  }
}

export interface Client {
  base: string;
  /** Identify your app: refdata answers 400 without a User-Agent. */
  userAgent: string;
  language?: string;
}

async function get<T>(c: Client, path: string, etag?: string | null): Promise<{ status: number; etag: string | null; body: T | null }> {
  const headers: Record<string, string> = { "User-Agent": c.userAgent };
  if (etag) headers["If-None-Match"] = etag;
  const res = await fetch(c.base + path, { headers });
  if (res.status === 304) return { status: 304, etag: etag ?? null, body: null };
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as ErrorBody | null;
    throw new ApiError(res.status, body);
  }
  return { status: res.status, etag: res.headers.get("ETag"), body: (await res.json()) as T };
}

function query(c: Client): string {
  return c.language ? `?language=${encodeURIComponent(c.language)}` : "";
}

async function fetchItem<C extends Category>(c: Client, category: C, uuid: string): Promise<ItemOf<C>> {
  const { body } = await get<{ status: number; data: ItemOf<C> }>(c, `/v1/${category}/${uuid}${query(c)}`);
  if (!body) throw new Error(`no body for ${category}/${uuid}`);
  return body.data;
}

/** What one poll did. */
export type PollResult =
  | { kind: "unchanged" }
  | { kind: "applied"; from: string; to: string; fetched: number; removed: number }
  | { kind: "reload-needed"; to: string; reason: string };

/**
 * poll checks /v1/version once. When the version moved, it applies
 * /v1/diff/latest if that starts at the cache's version, else
 * /v1/diff/{ours}/{theirs}; when ours is no longer retained the caller reloads.
 */
export async function poll(c: Client, cache: Cache): Promise<PollResult> {
  const v = await get<VersionBody>(c, "/v1/version", cache.etag);
  if (v.status === 304 || !v.body) return { kind: "unchanged" };
  const to = v.body.data.manifestId;
  if (to === cache.manifestId) {
    cache.etag = v.etag;
    return { kind: "unchanged" };
  }
  if (cache.manifestId === null) return { kind: "reload-needed", to, reason: "the cache is empty" };

  let diff: DiffBody["data"];
  try {
    const latest = await get<DiffBody>(c, "/v1/diff/latest");
    if (latest.body && latest.body.data.fromVersion === cache.manifestId && latest.body.data.toVersion === to) {
      diff = latest.body.data;
    } else {
      const named = await get<DiffBody>(c, `/v1/diff/${cache.manifestId}/${to}`);
      if (!named.body) throw new Error("empty diff");
      diff = named.body.data;
    }
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      return { kind: "reload-needed", to, reason: `version ${cache.manifestId} is no longer retained` };
    }
    throw e;
  }
  const applied = await apply(c, cache, diff);
  cache.manifestId = to;
  cache.etag = v.etag;
  return { kind: "applied", from: diff.fromVersion, to, ...applied };
}

/** apply makes the cache's catalogs those of diff.toVersion. */
export async function apply(c: Client, cache: Cache, diff: DiffBody["data"]): Promise<{ fetched: number; removed: number }> {
  let fetched = 0;
  let removed = 0;
  for (const category of Object.keys(diff.categories) as Category[]) {
    removed += await applyCategory(c, cache, category, diff.categories[category], (n) => { fetched += n; });
  }
  return { fetched, removed };
}

async function applyCategory<C extends Category>(
  c: Client,
  cache: Cache,
  category: C,
  change: components["schemas"]["CategoryDiff"],
  onFetched: (n: number) => void,
): Promise<number> {
  const items: Map<string, ItemOf<C>> = (cache.items[category] as Map<string, ItemOf<C>> | undefined) ?? new Map();
  for (const uuid of change.removed) items.delete(uuid);
  const wanted = [...change.added, ...change.changed.map((ch) => ch.uuid)];
  for (const uuid of wanted) items.set(uuid, await fetchItem(c, category, uuid));
  onFetched(wanted.length);
  (cache.items as Record<Category, Map<string, unknown>>)[category] = items;
  return change.removed.length;
}

/** Example: a map's callouts are typed from the spec. */
export function calloutNames(cache: Cache): string[] {
  const maps = cache.items["maps"];
  if (!maps) return [];
  const names: string[] = [];
  for (const m of maps.values()) {
    for (const callout of m.callouts ?? []) names.push(`${m.displayName}: ${callout.regionName} ${callout.superRegionName}`);
  }
  return names;
}

/** The query /v1/agents takes, typed from the spec. */
export type AgentsQuery = NonNullable<operations["listAgents"]["parameters"]["query"]>;

/** The agents a player can pick: the public API's isPlayableCharacter filter. */
export async function playableAgents(c: Client): Promise<ItemOf<"agents">[]> {
  const q: AgentsQuery = { isPlayableCharacter: "true" };
  const params = new URLSearchParams(q as Record<string, string>);
  if (c.language) params.set("language", c.language);
  const { body } = await get<{ status: number; data: ItemOf<"agents">[] }>(c, `/v1/agents?${params}`);
  return body?.data ?? [];
}

// @ts-expect-error the filter takes "true" or "false", nothing else
export const badFilter: AgentsQuery["isPlayableCharacter"] = "yes";

// The types are the spec's, not `any`: tsc fails here if a schema loosens.
// @ts-expect-error a map's displayName is text, never a number
export const typed: ItemOf<"maps">["displayName"] = 1;
