package repair

import (
	"encoding/json"
	"testing"

	"github.com/valyala/fastjson"
)

// quirkInputs are one argument text per malformed kind (wire-and-cache.md
// §1.5 and the peers' inputs in peers.md §3).
var quirkInputs = []struct{ name, in string }{
	{"trailing_comma", `{"path":"internal/stream/decoder.go","line":42,"tags":["sse","json",],}`},
	{"code_fence", "```json\n{\"path\":\"internal/stream/decoder.go\",\"line\":42}\n```"},
	{"single_quotes", `{'path': 'main.go', 'content': 'package main', 'overwrite': true}`},
	{"python_literals", `{"path": "main.go", "overwrite": True, "mode": None}`},
	{"double_encoded", `"{\"shop_name\": \"A店\", \"start_date\": \"2025-03-23\", \"end_date\": \"2025-03-23\"}"`},
	{"concatenated", `{"city": "Seattle", "state": "WA", "unit": "celsius"}{"city": "Seattle", "state": "WA", "unit": "celsius"}`},
	{"metadata_prefix", `.functions.read:0 {"path":"/tmp/report.txt"}x`},
	{"smart_quotes", `{“path”:“safe.txt”,“command”:“go test ./...”}`},
	{"control_chars", "{\"content\":\"package main\n\nfunc main() {\n\tprintln(1)\n}\"}"},
	{"missing_close", `{"command":"go test ./... -run TestDecoder","timeout_ms":120000,"env":{"GOFLAGS":"-count=1"`},
	{"truncated_string", `{"path":"a.go","content":"package main\n\nfunc main() {\n\tprintln(\"hi`},
}

func BenchmarkValid(b *testing.B) {
	b.SetBytes(int64(len(validArgs2K)))
	b.ReportAllocs()
	for b.Loop() {
		if !Valid(validArgs2K) {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkExtended(b *testing.B) {
	dst := make([]byte, 0, 4096)
	b.Run("valid_2KB", func(b *testing.B) {
		b.SetBytes(int64(len(validArgs2K)))
		b.ReportAllocs()
		for b.Loop() {
			dst, _, _ = Extended(dst[:0], validArgs2K, nil)
		}
	})
	for _, q := range quirkInputs {
		in := []byte(q.in)
		b.Run(q.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				dst, _, _ = Extended(dst[:0], in, []byte("read"))
			}
		})
	}
}

func BenchmarkOpenClawExtract(b *testing.B) {
	dst := make([]byte, 0, 4096)
	for _, c := range []struct{ name, in string }{
		{"valid_2KB", string(validArgs2K)},
		{"metadata_prefix", `.functions.read:0 {"path":"/tmp/report.txt"}x`},
		{"smart_quotes", `{“path”:“safe.txt”,“offset”:5,“limit”:20}`},
		{"unrepairable", `{"path":"/tmp/a",}`},
	} {
		in := []byte(c.in)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				dst, _, _, _, _ = OpenClawExtract(dst[:0], in, []byte("read"))
			}
		})
	}
}

func BenchmarkPiParse(b *testing.B) {
	dst := make([]byte, 0, 4096)
	for _, c := range []struct{ name, in string }{
		{"valid_2KB", string(validArgs2K)},
		{"control_chars", quirkInputs[8].in},
		{"missing_close", quirkInputs[9].in},
		{"truncated_string", quirkInputs[10].in},
	} {
		in := []byte(c.in)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				dst, _ = PiParse(dst[:0], in)
			}
		})
	}
}

func BenchmarkDecodeEntities(b *testing.B) {
	dst := make([]byte, 0, 4096)
	in := []byte(`{"command":"cd ~/dev/vibe/caracle &amp;&amp; source .env &amp;&amp; psql &quot;$DATABASE_URL_SESSION&quot; -c &quot;SELECT 1&quot;","timeout":30}`)
	b.Run("xai_command", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			dst = DecodeEntitiesInJSON(dst[:0], in)
		}
	})
	b.Run("no_entities_2KB", func(b *testing.B) {
		b.SetBytes(int64(len(validArgs2K)))
		b.ReportAllocs()
		for b.Loop() {
			dst = DecodeEntitiesInJSON(dst[:0], validArgs2K)
		}
	})
}

// BenchmarkValidEncodingJSON is the baseline for BenchmarkValid.
func BenchmarkValidEncodingJSON(b *testing.B) {
	b.SetBytes(int64(len(validArgs2K)))
	b.ReportAllocs()
	for b.Loop() {
		if !json.Valid(validArgs2K) {
			b.Fatal("invalid")
		}
	}
}

// BenchmarkValidFastjson is the second baseline for BenchmarkValid.
func BenchmarkValidFastjson(b *testing.B) {
	b.SetBytes(int64(len(validArgs2K)))
	b.ReportAllocs()
	for b.Loop() {
		if fastjson.ValidateBytes(validArgs2K) != nil {
			b.Fatal("invalid")
		}
	}
}
