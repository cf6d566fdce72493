package prompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// WarningMode is bootstrapPromptTruncationWarning: off, once or always.
type WarningMode uint8

const (
	// WarnOnce warns when this truncation signature was not seen before in
	// the session (the 2026.5.7 default).
	WarnOnce WarningMode = iota
	// WarnOff never warns.
	WarnOff
	// WarnAlways warns on every truncated turn.
	WarnAlways
)

// ErrWarningMode is returned for an unknown warning mode.
var ErrWarningMode = errors.New("prompt: unknown bootstrap warning mode")

// ParseWarningMode parses "off", "once" (or "") and "always".
func ParseWarningMode(s string) (WarningMode, error) {
	switch s {
	case "", "once":
		return WarnOnce, nil
	case "off":
		return WarnOff, nil
	case "always":
		return WarnAlways, nil
	}
	return 0, fmt.Errorf("%w: %q", ErrWarningMode, s)
}

// MaxSeenSignatures is how many warning signatures a session remembers.
const MaxSeenSignatures = 32

// nearLimitRatio flags files whose injected size is close to a limit.
const nearLimitRatio = 0.85

// RawFileStat is a bootstrap file before budgeting.
type RawFileStat struct {
	Name, Path string
	Missing    bool
	RawChars   int
}

// InjectedStat is the injected size of the file at Path.
type InjectedStat struct {
	Path  string
	Chars int
}

// FileBudgetStat is one file's line in the budget analysis.
type FileBudgetStat struct {
	Name, Path              string
	RawChars, InjectedChars int
	Truncated, NearLimit    bool
	// Causes: "per-file-limit" and/or "total-limit".
	Causes []string
}

// BudgetWarning is the outcome of the bootstrap budget analysis for a turn
// (buildBootstrapInjectionStats + analyzeBootstrapBudget +
// buildBootstrapPromptWarning).
type BudgetWarning struct {
	Files []FileBudgetStat
	// Signature identifies the truncation state; "once" mode warns only for
	// signatures not yet seen.
	Signature string
	Shown     bool
	// Lines are the per-file warning lines (empty unless Shown).
	Lines []string
	// SystemNotice is BootstrapTruncationNotice when Shown, else "".
	SystemNotice string
	// Seen is the session's signature list after this turn (at most 32).
	Seen []string
}

// AnalyzeBudget computes the truncation analysis and decides, by mode and
// the session's seen signatures, whether to warn.
func AnalyzeBudget(maxChars, totalMaxChars int, raw []RawFileStat, injected []InjectedStat, mode WarningMode, seen []string) BudgetWarning {
	var w BudgetWarning
	totalInjected := 0
	for _, in := range injected {
		totalInjected += in.Chars
	}
	totalHit := totalMaxChars > 0 && totalInjected >= totalMaxChars
	for _, r := range raw {
		inj := 0
		for _, in := range injected {
			if in.Path == r.Path {
				inj = in.Chars
				break
			}
		}
		st := FileBudgetStat{Name: r.Name, Path: r.Path, RawChars: r.RawChars, InjectedChars: inj}
		if !r.Missing {
			st.Truncated = inj < r.RawChars
			st.NearLimit = float64(inj) >= nearLimitRatio*float64(maxChars)
		}
		if st.Truncated {
			if r.RawChars > maxChars {
				st.Causes = append(st.Causes, "per-file-limit")
			}
			if totalHit {
				st.Causes = append(st.Causes, "total-limit")
			}
		}
		w.Files = append(w.Files, st)
	}
	w.Signature = budgetSignature(maxChars, totalMaxChars, w.Files)
	truncated := 0
	for _, f := range w.Files {
		if f.Truncated {
			truncated++
		}
	}
	switch mode {
	case WarnAlways:
		w.Shown = truncated > 0
	case WarnOnce:
		w.Shown = truncated > 0 && !slices.Contains(seen, w.Signature)
	}
	w.Seen = seen
	if w.Shown {
		shown := 0
		for _, f := range w.Files {
			if !f.Truncated {
				continue
			}
			if shown == 3 {
				break
			}
			shown++
			removed := 0
			if f.RawChars > 0 {
				removed = int(math.Round(float64(f.RawChars-f.InjectedChars) / float64(f.RawChars) * 100))
			}
			causes := make([]string, 0, 2)
			for _, c := range f.Causes {
				if c == "per-file-limit" {
					causes = append(causes, "max/file")
				} else {
					causes = append(causes, "max/total")
				}
			}
			w.Lines = append(w.Lines, fmt.Sprintf("%s: %d raw -> %d injected (~%d%% removed; %s).", f.Name, f.RawChars, f.InjectedChars, removed, strings.Join(causes, ", ")))
		}
		if more := truncated - shown; more > 0 {
			w.Lines = append(w.Lines, fmt.Sprintf("+%d more truncated file(s).", more))
		}
		w.Lines = append(w.Lines, "If unintentional, raise agents.defaults.bootstrapMaxChars and/or agents.defaults.bootstrapTotalMaxChars.")
		w.SystemNotice = BootstrapTruncationNotice
		if !slices.Contains(seen, w.Signature) {
			w.Seen = append(slices.Clone(seen), w.Signature)
			if len(w.Seen) > MaxSeenSignatures {
				w.Seen = w.Seen[len(w.Seen)-MaxSeenSignatures:]
			}
		}
	}
	return w
}

// AppendToUserPrompt adds the CLI-backend form of the warning to a user
// prompt (unchanged when the warning is not shown).
func (w *BudgetWarning) AppendToUserPrompt(prompt string) string {
	if !w.Shown || len(w.Lines) == 0 {
		return prompt
	}
	var b strings.Builder
	b.WriteString(prompt)
	b.WriteString("\n\n[Bootstrap truncation warning]\nSome workspace bootstrap files were truncated before injection.\nTreat Project Context as partial and read the relevant files directly if details seem missing.")
	for _, l := range w.Lines {
		b.WriteString("\n- ")
		b.WriteString(l)
	}
	return b.String()
}

func budgetSignature(maxChars, totalMaxChars int, files []FileBudgetStat) string {
	type sigFile struct {
		Path          string   `json:"path"`
		RawChars      int      `json:"rawChars"`
		InjectedChars int      `json:"injectedChars"`
		Causes        []string `json:"causes"`
	}
	var fs []sigFile
	for _, f := range files {
		if !f.Truncated {
			continue
		}
		c := f.Causes
		if c == nil {
			c = []string{}
		}
		fs = append(fs, sigFile{f.Path, f.RawChars, f.InjectedChars, c})
	}
	slices.SortFunc(fs, func(a, b sigFile) int { return strings.Compare(a.Path, b.Path) })
	var b strings.Builder
	b.WriteString(`{"bootstrapMaxChars":`)
	b.WriteString(strconv.Itoa(maxChars))
	b.WriteString(`,"bootstrapTotalMaxChars":`)
	b.WriteString(strconv.Itoa(totalMaxChars))
	b.WriteString(`,"files":`)
	if len(fs) == 0 {
		b.WriteString("[]")
	} else {
		var jb bytes.Buffer
		enc := json.NewEncoder(&jb)
		enc.SetEscapeHTML(false) // JSON.stringify does not escape <, >, &
		_ = enc.Encode(fs)
		b.Write(bytes.TrimRight(jb.Bytes(), "\n"))
	}
	b.WriteString("}")
	return b.String()
}
