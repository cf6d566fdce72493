package provider

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// generatedRE matches what the OpenClaw rules generate at random:
// commentary ids and fallback call ids.
var generatedRE = regexp.MustCompile(`((?:commentary|final-answer)-[0-9]+-|call_)[0-9a-f]{24}`)

// TestOpenClawFastMatchesReference decodes every OpenClaw rule case of the
// replay goldens (cmd/ocbench/testdata/replay/openclaw) with the fast
// paths and with the fastjson reference decoders under the OpenClaw rules:
// both must give the same message (the goldens check the fast paths
// against OpenClaw itself).
func TestOpenClawFastMatchesReference(t *testing.T) {
	files, err := filepath.Glob("../cmd/ocbench/testdata/replay/openclaw/*.sse")
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule cases: %v", err)
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		flags, err := os.ReadFile(strings.TrimSuffix(f, ".sse") + ".flags")
		if err != nil {
			t.Fatal(err)
		}
		w := WireAnthropic
		switch {
		case bytes.Contains(flags, []byte("openai-chat")):
			w = WireOpenAIChat
		case bytes.Contains(flags, []byte("openai-responses")):
			w = WireOpenAIResponses
		}
		o := Options{OpenClaw: true}
		fast := decodeBytes(w, body, o)
		ref := NewDecoder(w, bytes.NewReader(body), o)
		ref.ref = true
		slow := drain(ref)
		slow.msg.Timestamp = fast.msg.Timestamp
		a := generatedRE.ReplaceAll(fast.msg.AppendJSON(nil), []byte("${1}<random>"))
		b := generatedRE.ReplaceAll(slow.msg.AppendJSON(nil), []byte("${1}<random>"))
		if !bytes.Equal(a, b) {
			t.Errorf("%s:\nfast      %s\nreference %s", filepath.Base(f), a, b)
		}
	}
}
