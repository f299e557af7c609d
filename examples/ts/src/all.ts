// language=all: every localized text of a body is an object keyed by the 18 locale
// codes. The spec documents these shapes (`…AllBody`, `LocalizedText`), so a real
// body — testdata/skin-all.json, /v1/weapons/skins/{uuid}?language=all of the
// embedded sample data — type-checks against them, and a client reads one name
// per locale without casts.
import type { components } from "../gen/schema";
import body from "./testdata/skin-all.json" with { type: "json" };

export type WeaponSkinAllBody = components["schemas"]["WeaponSkinAllBody"];
export type Locale = components["schemas"]["Locale"];

export const skin: WeaponSkinAllBody = body;

/** The skin's name and its levels' names in one locale. */
export function namesIn(b: WeaponSkinAllBody, locale: Locale): string[] {
  return [b.data.displayName[locale], ...b.data.levels.map((l) => l.displayName[locale])];
}

export const japanese: string[] = namesIn(skin, "ja-JP");

// @ts-expect-error with language=all a name is an object, never a plain string
export const notText: string = skin.data.displayName;
