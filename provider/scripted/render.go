package scripted

import "github.com/ocbench/ocbench/provider/wireenc"

// Render appends the whole wire body of turn t to dst, as the HTTP server
// would send it but with no waiting: latency and stalls are skipped, cuts
// (Turn.CutAt, Call.Cut) and malformations are kept. It is how the fuzzer
// and bug reports get a replayable body for `ocbench replay`.
func Render(dst []byte, w wireenc.Wire, meta wireenc.Meta, t *Turn) []byte {
	var p player
	p.reset(w, meta, wireenc.Options{Ping: w == wireenc.Anthropic}, nil, t, 0)
	start := len(dst)
	for {
		p.buf = p.buf[:0]
		act, _ := p.next()
		dst = append(dst, p.buf...)
		if t.CutAt > 0 && len(dst)-start >= t.CutAt {
			return dst[:start+t.CutAt]
		}
		if act == actEOF {
			return dst
		}
	}
}
