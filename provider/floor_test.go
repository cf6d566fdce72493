package provider

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/valyala/fastjson"
)

// BenchmarkFastjsonFloor is the peer "lower bound": ReadSlice plus one
// fastjson parse per data line, no event model.
func BenchmarkFastjsonFloor(b *testing.B) {
	for _, s := range synthStreams {
		b.Run(s.name, func(b *testing.B) {
			st := s.gen(2000, 1)
			br := bytes.NewReader(st.Body)
			rd := bufio.NewReaderSize(br, 64<<10)
			var p fastjson.Parser
			b.SetBytes(int64(len(st.Body)))
			b.ReportAllocs()
			for b.Loop() {
				br.Reset(st.Body)
				rd.Reset(br)
				for {
					line, err := rd.ReadSlice('\n')
					if err != nil {
						break
					}
					if bytes.HasPrefix(line, []byte("data: {")) {
						v, err := p.ParseBytes(line[6:])
						if err != nil {
							b.Fatal(err)
						}
						_ = v.GetStringBytes("type")
					}
				}
			}
		})
	}
}
