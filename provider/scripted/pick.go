package scripted

import (
	"strings"
	"sync/atomic"

	"github.com/ocbench/ocbench/llm"
)

// A Picker chooses the turn that answers req, and the script it belongs to
// (whose Latency and Chunk apply). It is called concurrently and must not
// keep req. Returning a nil turn refuses the request with HTTP 500.
type Picker func(req *llm.Request) (*Script, *Turn)

// ByPosition answers the first request after a user message with turn 0,
// the next (the one carrying the tool results) with turn 1, and so on: the
// turn index is the number of assistant messages after the last user
// message, and requests past the last turn get the last turn. Every new
// user message starts over, so turn loops can run forever.
func ByPosition(s *Script) Picker {
	return func(req *llm.Request) (*Script, *Turn) {
		if len(s.Turns) == 0 {
			return s, nil
		}
		i := min(Position(req), len(s.Turns)-1)
		return s, &s.Turns[i]
	}
}

// Position returns the number of assistant messages after the last user
// message of req.
func Position(req *llm.Request) int {
	n := 0
	for i := len(req.Messages) - 1; i >= 0; i-- {
		switch req.Messages[i].Role {
		case llm.RoleUser:
			return n
		case llm.RoleAssistant:
			n++
		}
	}
	return n
}

// Sequential answers requests with the turns in order regardless of their
// content, cycling: request k gets turn k mod len(Turns).
func Sequential(s *Script) Picker {
	var n atomic.Uint64
	return func(*llm.Request) (*Script, *Turn) {
		if len(s.Turns) == 0 {
			return s, nil
		}
		k := n.Add(1) - 1
		return s, &s.Turns[k%uint64(len(s.Turns))]
	}
}

// Rule selects Script when the last user message contains Contains (every
// message matches an empty Contains).
type Rule struct {
	Contains string
	Script   *Script
}

// ByLastUser picks the script of the first rule whose Contains occurs in
// the text of the last user message, then its turn by position; requests
// no rule matches go to fallback (nil: refused).
func ByLastUser(rules []Rule, fallback Picker) Picker {
	return func(req *llm.Request) (*Script, *Turn) {
		u := lastUser(req)
		for i := range rules {
			if rules[i].Script != nil && len(rules[i].Script.Turns) > 0 && containsText(u, rules[i].Contains) {
				s := rules[i].Script
				return s, &s.Turns[min(Position(req), len(s.Turns)-1)]
			}
		}
		if fallback == nil {
			return nil, nil
		}
		return fallback(req)
	}
}

func lastUser(req *llm.Request) *llm.Message {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return &req.Messages[i]
		}
	}
	return nil
}

func containsText(m *llm.Message, sub string) bool {
	if sub == "" {
		return true
	}
	if m == nil {
		return false
	}
	for i := range m.Content {
		if m.Content[i].Type == llm.BlockText && strings.Contains(string(m.Content[i].Text), sub) {
			return true
		}
	}
	return false
}

// DefaultReadPath is the file the default script asks the read tool for.
const DefaultReadPath = "AGENTS.md"

// Default returns the built-in script: turn 0 says what it will do and
// calls the read tool on DefaultReadPath; turn 1, given the tool result,
// answers. Usage reports a cached prompt prefix. It needs no key and no
// network, and every command uses it when nothing else is configured.
func Default() *Script {
	return &Script{
		Chunk: 12,
		Turns: []Turn{
			{
				Steps: []Step{
					Text("I'll start by reading the workspace instructions."),
					ToolCall("", "read", `{"path":"`+DefaultReadPath+`"}`).Chunked(6),
				},
				Usage: llm.Usage{Input: 412, CacheRead: 3072, Output: 38},
			},
			{
				Steps: []Step{
					Text("I read " + DefaultReadPath + ". The workspace is set up and its instructions are clear: " +
						"keep changes small, run the tests before committing, and write down what changed. " +
						"Nothing else needs doing right now."),
				},
				Usage: llm.Usage{Input: 655, CacheRead: 3072, Output: 46},
			},
		},
	}
}

// zeroLatency is the Latency of a script that never sleeps.
var zeroLatency Latency

func (l Latency) isZero() bool { return l == zeroLatency }

// latencyOf returns the latency that applies to t in s.
func latencyOf(s *Script, t *Turn) Latency {
	if !t.Latency.isZero() {
		return t.Latency
	}
	if s != nil {
		return s.Latency
	}
	return zeroLatency
}
