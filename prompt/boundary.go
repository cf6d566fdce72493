package prompt

import (
	"strings"

	"github.com/ocbench/ocbench/llm"
)

// SplitBoundary splits a prompt at the first cache boundary marker: the
// stable prefix (trailing whitespace trimmed) and the dynamic suffix
// (leading whitespace trimmed). ok is false when there is no marker; then
// stable is the whole prompt.
func SplitBoundary(prompt string) (stable, dynamic string, ok bool) {
	i := strings.Index(prompt, CacheBoundary)
	if i < 0 {
		return prompt, "", false
	}
	return strings.TrimRightFunc(prompt[:i], llm.IsJSSpace), strings.TrimLeftFunc(prompt[i+len(CacheBoundary):], llm.IsJSSpace), true
}

// StripBoundary replaces every marker with a single "\n", as OpenClaw does
// for providers that do not consume it.
func StripBoundary(prompt string) string {
	return strings.ReplaceAll(prompt, CacheBoundary, "\n")
}

// PrependAfterBoundary inserts a context-engine addition right after the
// boundary (prependSystemPromptAdditionAfterCacheBoundary): stable prefix,
// marker, the normalised addition, a blank line, the normalised dynamic
// suffix. A prompt without a marker gets the addition in front, separated
// by a blank line; a blank prompt becomes the addition. Markers inside the
// addition are neutralised so that only one boundary remains.
func PrependAfterBoundary(prompt, addition string) string {
	if strings.Contains(addition, CacheBoundary) {
		addition = strings.ReplaceAll(addition, CacheBoundary, "\n")
	}
	add := normalizeBlock(addition)
	if add == "" {
		return prompt
	}
	if strings.TrimSpace(prompt) == "" {
		return add
	}
	stable, dynamic, ok := SplitBoundary(prompt)
	if !ok {
		return add + "\n\n" + prompt
	}
	dynamic = normalizeBlock(dynamic)
	if dynamic == "" {
		return stable + CacheBoundary + add
	}
	return stable + CacheBoundary + add + "\n\n" + dynamic
}
