package provider

import "github.com/ocbench/ocbench/llm"

// UsageSoFar returns the usage the stream has reported so far. The
// Message's Usage is filled only when the message ends; a gateway
// re-encoding Anthropic's message_start needs the input and cache figures
// the upstream sent there before that.
func (d *Decoder) UsageSoFar() llm.Usage {
	return llm.Usage{Input: d.uIn, Output: d.uOut, CacheRead: d.uCacheRead, CacheWrite: d.uCacheWrite, Reasoning: d.uReason,
		TotalTokens: d.uIn + d.uOut + d.uCacheRead + d.uCacheWrite}
}
