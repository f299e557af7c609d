// A Premier team logo in a team's colors, recolored by the server: the contract's
// rule (marker colors to slots, a tolerance band for anti-aliased edges) runs once,
// there, instead of in every client. Colors travel in the contract's form,
// (R=..,G=..,B=..,A=..) with channels in [0, 1]; each slot may be left out. The
// answer is a PNG with a strong ETag; sending it back costs a 304, no recoloring.
import type { operations } from "../gen/schema";
import type { Client } from "./sync";

/** The query the spec gives the route: primary, secondary, outline, each optional. */
export type LogoColors = NonNullable<operations["getPremierLogoImage"]["parameters"]["query"]>;

/** A color in the contract's form from 8-bit channels: (R=1,G=0.5019607843137255,…). */
export function contractColor(r: number, g: number, b: number, a = 255): string {
  const ch = (v: number) => String(Math.min(255, Math.max(0, Math.round(v))) / 255);
  return `(R=${ch(r)},G=${ch(g)},B=${ch(b)},A=${ch(a)})`;
}

/** The URL of a logo recolored with colors. */
export function logoURL(uuid: string, colors: LogoColors): string {
  const q = new URLSearchParams();
  for (const slot of ["primary", "secondary", "outline"] as const) {
    const v = colors[slot];
    if (v !== undefined) q.set(slot, v);
  }
  const query = q.toString();
  return `/v1/premier/logos/${encodeURIComponent(uuid)}/image` + (query ? "?" + query : "");
}

/** A recolored logo as PNG bytes with its ETag; null when the one held (etag) is current. */
export async function fetchLogo(
  c: Client,
  uuid: string,
  colors: LogoColors,
  etag?: string,
): Promise<{ png: Uint8Array; etag: string } | null> {
  const headers: Record<string, string> = { "User-Agent": c.userAgent };
  if (etag) headers["If-None-Match"] = etag;
  const res = await fetch(c.base + logoURL(uuid, colors), { headers });
  if (res.status === 304) return null;
  // 400: a color not in the contract's form; 404: no such logo, or its image is not mirrored.
  if (!res.ok) throw new Error(`logo ${uuid}: ${res.status} ${await res.text()}`);
  return { png: new Uint8Array(await res.arrayBuffer()), etag: res.headers.get("ETag") ?? "" };
}

/** A team in dark blue and gold with a white outline. */
export const team: LogoColors = {
  primary: contractColor(20, 40, 120),
  secondary: contractColor(230, 180, 30),
  outline: "(R=1,G=1,B=1,A=1)",
};
