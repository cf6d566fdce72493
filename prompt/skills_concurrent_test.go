package prompt

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestBuildSkillsPromptConcurrent sorts skill lists from many goroutines at
// once. A collator shared between calls (collate.Collator keeps its
// iterators in the value) panics, mis-sorts or is reported by -race here.
func TestBuildSkillsPromptConcurrent(t *testing.T) {
	base := make([]Skill, 40)
	for i := range base {
		// Names that need the collator (case, accents, punctuation), not a
		// byte order.
		name := []string{"Zeta", "alpha", "Éclair", "beta-2", "beta_1", "Ω", "delta", "Delta", "ça", "ab"}[i%10]
		base[i] = Skill{Name: fmt.Sprintf("%s%d", name, i/10), Description: "d", FilePath: fmt.Sprintf("/s/%d/SKILL.md", i)}
	}
	want := BuildSkillsPrompt(base, SkillLimits{}, "", "").Prompt
	const goroutines, iters = 16, 60
	var wg sync.WaitGroup
	errs := make(chan string, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			in := make([]Skill, len(base))
			for range iters {
				copy(in, base)
				r.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
				// Equal names would keep input order (stable sort); all names
				// here are distinct, so any order must sort to want.
				if got := BuildSkillsPrompt(in, SkillLimits{}, "", "").Prompt; got != want {
					errs <- got
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for got := range errs {
		t.Fatalf("concurrent sort differs from the sequential one:\n%s\nwant:\n%s", got, want)
	}
}
