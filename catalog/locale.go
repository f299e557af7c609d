package catalog

import "strings"

// Locales are the 18 supported locale codes, in /v1/locres's order.
var Locales = [NumLocales]string{
	"ar-AE", "de-DE", "en-US", "es-ES", "es-MX", "fr-FR", "id-ID", "it-IT", "ja-JP",
	"ko-KR", "pl-PL", "pt-BR", "ru-RU", "th-TH", "tr-TR", "vi-VN", "zh-CN", "zh-TW",
}

// NumLocales is the number of supported locales.
const NumLocales = 18

// DefaultLocale is the index of en-US, the locale every text falls back to.
const DefaultLocale = 2

// SupportedLocales is the list for error messages.
var SupportedLocales = strings.Join(Locales[:], ", ")

// ParseLocale finds a supported locale in any letter case ("de-de" is de-DE).
func ParseLocale(s string) (int, bool) {
	for i, l := range Locales {
		if strings.EqualFold(l, s) {
			return i, true
		}
	}
	return 0, false
}
