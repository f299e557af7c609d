// Asking the data instead of downloading it: on every catalog list, q keeps the
// items a query matches and fields keeps some paths of each (the grammar is
// openapi.yaml's parameter Q). Three questions a client of the skins asks — which
// skin has this level, every skin of a tier, a name in any locale — are each one
// request answering a few items, not the whole list (392 skins in the sample,
// about 1,600 at the public API's size). The query and the bodies are the spec's types.
import type { components, operations } from "../gen/schema";
import { ApiError, type Client, type ErrorBody } from "./sync";
import cutBody from "./testdata/skins-fields.json" with { type: "json" };

type Json<R> = R extends { content: { "application/json": infer B } } ? B : never;

/** The query /v1/weapons/skins takes: language, q, fields. */
export type SkinsQuery = NonNullable<operations["listWeaponSkins"]["parameters"]["query"]>;
/** What it answers: whole skins, every locale's text (language=all), or skins cut to fields. */
export type SkinsAnswer = Json<operations["listWeaponSkins"]["responses"][200]>;
export type WeaponSkin = components["schemas"]["WeaponSkin"];
export type SkinLevel = components["schemas"]["SkinLevel"];
export type Locale = components["schemas"]["Locale"];
/** Whole skins in one language: the answer without fields or language=all. */
export type SkinList = components["schemas"]["WeaponSkinListBody"];
/** Items cut to fields; `fields` names the paths kept, sorted. */
export type FieldsListBody = components["schemas"]["FieldsListBody"];

/** The URL of /v1/weapons/skins asking query. */
export function skinsURL(query: SkinsQuery): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined) params.set(name, value);
  }
  return "/v1/weapons/skins?" + params.toString();
}

async function ask<B extends SkinsAnswer>(c: Client, query: SkinsQuery): Promise<B> {
  const res = await fetch(c.base + skinsURL(query), { headers: { "User-Agent": c.userAgent } });
  // 400 names the term at fault and where: `q: term 1 ("cost=>5", at character 5): bad operator "=>"; …`
  if (!res.ok) throw new ApiError(res.status, (await res.json().catch(() => null)) as ErrorBody | null);
  return (await res.json()) as B;
}

/** text as a value of q: quoted, so spaces, quotes, parentheses and OR are text. */
export function quoted(text: string): string {
  return '"' + text.replace(/[\\"]/g, "\\$&") + '"';
}

/**
 * The skin one of whose levels is levelUuid (a store offer or a loadout names a
 * level, not its skin): `levels.uuid=…` holds when any level matches.
 */
export async function skinOfLevel(c: Client, levelUuid: string): Promise<WeaponSkin | undefined> {
  const body = await ask<SkinList>(c, { q: `levels.uuid=${levelUuid}` });
  return body.data[0];
}

/** Every skin of a content tier (`contentTierUuid=null`: the skins of none). */
export async function skinsOfTier(c: Client, tierUuid: string): Promise<WeaponSkin[]> {
  return (await ask<SkinList>(c, { q: `contentTierUuid=${tierUuid}` })).data;
}

/**
 * The skins whose name contains text in any of the 18 locales (`name:`; a bare
 * word looks in the request's language only), named in language: a player who
 * types ヴァンダル gets every Vandal skin, in English by default.
 */
export async function skinsNamed(c: Client, text: string, language?: Locale): Promise<WeaponSkin[]> {
  const query: SkinsQuery = { q: `name:${quoted(text)}` };
  if (language) query.language = language;
  return (await ask<SkinList>(c, query)).data;
}

/**
 * cutTo reads an answer cut to top-level fields as items of T with only those
 * fields, after checking that the answer kept exactly them.
 */
export function cutTo<T, K extends keyof T & string>(body: FieldsListBody, keys: readonly K[]): Pick<T, K>[] {
  const want = [...keys].sort().join(",");
  if (body.fields.join(",") !== want) throw new Error(`the answer kept ${body.fields.join(",")}, not ${want}`);
  return body.data as unknown as Pick<T, K>[];
}

/** The uuid and name of each skin q matches, and nothing more: about 80 bytes a skin in the sample, not 2.2 KB. */
export async function skinNames(c: Client, q = ""): Promise<Pick<WeaponSkin, "uuid" | "displayName">[]> {
  const body = await ask<FieldsListBody>(c, { q, fields: "uuid,displayName" });
  return cutTo<WeaponSkin, "uuid" | "displayName">(body, ["uuid", "displayName"]);
}

/**
 * A real answer cut to fields (testdata/skins-fields.json: the sample's
 * `/v1/weapons/skins?q=name:"Prime Vandal"&fields=uuid,displayName,levels.uuid,contentTierUuid&language=ja-JP`),
 * typed by the spec's FieldsListBody; a path through an array keeps that field
 * of each element.
 */
export const primeVandal: FieldsListBody = cutBody;
type CutSkin = Pick<WeaponSkin, "uuid" | "displayName" | "contentTierUuid"> & { levels: Pick<SkinLevel, "uuid">[] };
export const primeVandalLevels: string[] = (primeVandal.data as unknown as CutSkin[]).flatMap((s) => s.levels.map((l) => l.uuid));

// @ts-expect-error an answer cut to fields is not a list of whole skins
export const notWhole: SkinList = cutBody;
