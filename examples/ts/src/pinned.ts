// Reading one version whole while new ones are published: read /v1/version, then
// each catalog through the pinned URL of its manifestId, /v1/versions/{manifestId}/…,
// which serves that version's bytes for as long as it is retained (Cache-Control:
// immutable, so any cache may keep them). Reads that span a publish never mix two
// versions. Every answer of a current route also names its pinned URL in
// Content-Location. The types are the spec's pinned paths.
import type { operations, paths } from "../gen/schema";
import type { Client } from "./sync";

type Json<R> = R extends { content: { "application/json": infer B } } ? B : never;
type VersionBody = Json<operations["getVersion"]["responses"][200]>;

/** A pinned route of the spec: "/v1/versions/{manifestId}/weapons/skins". */
export type PinnedPath = Extract<keyof paths, `/v1/versions/{manifestId}/${string}`>;
/** What a pinned route answers: the body of the current route it pins. */
export type PinnedBody<P extends PinnedPath> = Json<paths[P]["get"]["responses"][200]>;

/** The URL of path pinned to the version manifestId, with an optional query. */
export function pinnedURL(path: PinnedPath, manifestId: string, query = ""): string {
  return path.replace("{manifestId}", encodeURIComponent(manifestId)) + query;
}

async function getJson<T>(c: Client, path: string): Promise<T> {
  const res = await fetch(c.base + path, { headers: { "User-Agent": c.userAgent } });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** The active version's weapons and, in Japanese, its skins: both of that one version. */
export async function readPinned(c: Client): Promise<{
  manifestId: string;
  weapons: PinnedBody<"/v1/versions/{manifestId}/weapons">["data"];
  skins: PinnedBody<"/v1/versions/{manifestId}/weapons/skins">["data"];
}> {
  const { data } = await getJson<VersionBody>(c, "/v1/version");
  const weapons = await getJson<PinnedBody<"/v1/versions/{manifestId}/weapons">>(c, pinnedURL("/v1/versions/{manifestId}/weapons", data.manifestId));
  const skins = await getJson<PinnedBody<"/v1/versions/{manifestId}/weapons/skins">>(
    c,
    pinnedURL("/v1/versions/{manifestId}/weapons/skins", data.manifestId, "?language=ja-JP"),
  );
  return { manifestId: data.manifestId, weapons: weapons.data, skins: skins.data };
}

// @ts-expect-error only the catalog routes and string tables are pinned, not /v1/version
export const notPinned: PinnedPath = "/v1/versions/{manifestId}/version";
