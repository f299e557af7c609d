#!/usr/bin/env python3
"""Print every request target the edge memo can hold, for a running server.

Reads the server's /openapi.json, and for each GET path that answers from the
edition (not diffs or metrics) prints it, with each UUID of its catalog for
{uuid} and each locale for {locale}, plain and with ?language= for each of the 18
locales. Used to fill the memo before measuring memory (BENCHMARKS.md):

    bench/targets.py http://127.0.0.1:18099 > /tmp/targets.txt
"""
import json
import sys
import urllib.request

UA = {"User-Agent": "bench/1.0 (+http://localhost)"}
LOCALES = ["ar-AE", "de-DE", "en-US", "es-ES", "es-MX", "fr-FR", "id-ID", "it-IT", "ja-JP",
           "ko-KR", "pl-PL", "pt-BR", "ru-RU", "th-TH", "tr-TR", "vi-VN", "zh-CN", "zh-TW"]


def get(base, path):
    with urllib.request.urlopen(urllib.request.Request(base + path, headers=UA)) as r:
        return json.load(r)


def main():
    base = sys.argv[1].rstrip("/")
    spec = get(base, "/openapi.json")
    locales = LOCALES
    for path, item in sorted(spec["paths"].items()):
        if "get" not in item or path.startswith("/v1/diff") or path == "/v1/metrics":
            continue
        if "{uuid}" in path:
            listing = get(base, path.replace("/{uuid}", ""))["data"]
            paths = [path.replace("{uuid}", x["uuid"]) for x in listing]
        elif "{locale}" in path:
            paths = [path.replace("{locale}", l) for l in locales]
        else:
            paths = [path]
        takes_language = any(p.get("$ref", "").endswith("/Language") or p.get("name") == "language"
                             for p in item["get"].get("parameters", []))
        for p in paths:
            print(p)
            if takes_language:
                for l in locales:
                    print(f"{p}?language={l}")


if __name__ == "__main__":
    main()
