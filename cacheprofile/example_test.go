package cacheprofile_test

import (
	"fmt"
	"strings"

	"github.com/ocbench/ocbench/cacheprofile"
)

// A two-call tool loop on Claude Sonnet 4.5: the second call reads what
// the first wrote, as the record says.
func ExampleProfile() {
	session := `{"type":"session","version":3,"id":"demo","timestamp":"2026-09-01T09:00:00Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-09-01T09:00:00Z","message":{"role":"user","content":"list the files","timestamp":1788253200000}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-09-01T09:00:02Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"bash","arguments":{"command":"ls"}}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":3,"output":20,"cacheRead":0,"cacheWrite":5000},"stopReason":"toolUse","timestamp":1788253201000}}
{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-09-01T09:00:03Z","message":{"role":"toolResult","toolCallId":"t1","toolName":"bash","content":[{"type":"text","text":"README.md\ngo.mod\n"}],"isError":false,"timestamp":1788253203000}}
{"type":"message","id":"a4","parentId":"a3","timestamp":"2026-09-01T09:00:05Z","message":{"role":"assistant","content":[{"type":"text","text":"Two files."}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":3,"output":5,"cacheRead":5000,"cacheWrite":40},"stopReason":"stop","timestamp":1788253204000}}
`
	rep, err := cacheprofile.Profile(strings.NewReader(session), cacheprofile.Options{
		OnCall: func(c *cacheprofile.Call) {
			fmt.Printf("line %d: predicted read %d write %d (%s); recorded read %d write %d\n", c.Line,
				c.Predicted.CacheRead, c.Predicted.CacheWrite, c.Predicted.Reason, c.Recorded.CacheRead, c.Recorded.CacheWrite)
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("tool-loop agreement %d/%d\n", rep.ToolLoop.Agree, rep.ToolLoop.Calls)
	// Output:
	// line 3: predicted read 0 write 5000 (cold); recorded read 0 write 5000
	// line 5: predicted read 5000 write 40 (hit); recorded read 5000 write 40
	// tool-loop agreement 1/1
}
