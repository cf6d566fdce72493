package tokenize

import (
	"runtime"
	"sync"
	"unicode"
	"unicode/utf8"
)

// minParallelChunk is the smallest piece of text worth a goroutine.
const minParallelChunk = 64 << 10

// CountParallel counts s like Count, splitting long texts into chunks that
// are counted concurrently by up to workers goroutines (GOMAXPROCS if
// workers <= 0). The result is exact: chunks are cut only where both
// encodings' pre-tokenizers always end a piece, right after a line break
// and before a letter, so no piece spans two chunks.
func (c *Counter) CountParallel(s string, workers int) (int, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers == 1 || len(s) < 2*minParallelChunk {
		return c.Count(s)
	}
	chunks := splitForCount(s, max(minParallelChunk, len(s)/(workers*4)))
	if len(chunks) == 1 {
		return c.Count(s)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total int
		first error
		next  = make(chan string)
	)
	for w := 0; w < min(workers, len(chunks)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sum := 0
			var err error
			for ch := range next {
				if err != nil {
					continue
				}
				var n int
				n, err = c.Count(ch)
				sum += n
			}
			mu.Lock()
			total += sum
			if err != nil && first == nil {
				first = err
			}
			mu.Unlock()
		}()
	}
	for _, ch := range chunks {
		next <- ch
	}
	close(next)
	wg.Wait()
	if first != nil {
		return 0, first
	}
	return total, nil
}

// splitForCount cuts s into chunks of about size bytes at safe boundaries:
// after '\n' and before a letter. A chunk without such a boundary simply
// grows.
func splitForCount(s string, size int) []string {
	var out []string
	for len(s) > size {
		cut := -1
		for i := size; i < len(s)-1; i++ {
			if s[i-1] != '\n' {
				continue
			}
			r, _ := utf8.DecodeRuneInString(s[i:])
			if unicode.IsLetter(r) {
				cut = i
				break
			}
		}
		if cut < 0 {
			break
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}
