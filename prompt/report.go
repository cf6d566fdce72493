package prompt

import (
	"fmt"
	"io"
	"strings"

	"github.com/ocbench/ocbench/tokenize"
)

// Report is the context report (OpenClaw's /context list) for one prompt.
type Report struct {
	Mode      string `json:"mode"`
	Workspace string `json:"workspace,omitempty"`
	Encoding  string `json:"encoding"`

	Bytes  int `json:"bytes"`
	Chars  int `json:"chars"`
	Tokens int `json:"tokens"`

	Boundary BoundaryReport `json:"boundary"`

	Sections []SectionReport `json:"sections"`
	Files    []FileReport    `json:"files"`
	Skills   SkillsReport    `json:"skills"`

	TruncationWarningShown bool     `json:"truncationWarningShown"`
	Warnings               []string `json:"warnings,omitempty"`
}

// BoundaryReport tells where the cache boundary falls.
type BoundaryReport struct {
	Present bool `json:"present"`
	// MarkerByte and MarkerChar are the offset of the marker (bytes, and
	// UTF-16 characters as OpenClaw counts).
	MarkerByte int `json:"markerByte"`
	MarkerChar int `json:"markerChar"`
	// Stable* describe the stable prefix (the split's trimmed text).
	StableBytes  int `json:"stableBytes"`
	StableChars  int `json:"stableChars"`
	StableTokens int `json:"stableTokens"`
	// Dynamic* describe the text after the marker.
	DynamicChars  int `json:"dynamicChars"`
	DynamicTokens int `json:"dynamicTokens"`
	// StableKey is the hash of the stable inputs (the prefix-cache key),
	// StablePrefixHash the xxhash of the stable prefix bytes.
	StableKey        string `json:"stableKey"`
	StablePrefixHash string `json:"stablePrefixHash"`
}

// SectionReport is one section of the prompt.
type SectionReport struct {
	Name   string `json:"name"`
	Part   string `json:"part"` // "stable" or "dynamic"
	Bytes  int    `json:"bytes"`
	Chars  int    `json:"chars"`
	Tokens int    `json:"tokens"`
}

// FileReport is one bootstrap file.
type FileReport struct {
	Name          string `json:"name"`
	Path          string `json:"path"`
	Missing       bool   `json:"missing"`
	RawChars      int    `json:"rawChars"`
	InjectedChars int    `json:"injectedChars"`
	Truncated     bool   `json:"truncated"`
	Injected      bool   `json:"injected"`
	Tokens        int    `json:"tokens"`
	Part          string `json:"part,omitempty"`
}

// SkillsReport summarises the skills prompt.
type SkillsReport struct {
	Eligible  int  `json:"eligible"`
	Included  int  `json:"included"`
	Compact   bool `json:"compact"`
	Truncated bool `json:"truncated"`
	Chars     int  `json:"chars"`
	Tokens    int  `json:"tokens"`
}

// BuildReport renders res.Params and reports on it, counting tokens with c.
// It also returns the rendered prompt.
func BuildReport(res *Resolved, c *tokenize.Counter) (*Report, []byte, error) {
	var spans []Span
	var r Renderer
	out, lay, err := r.appendPrompt(nil, &res.Params, &spans)
	if err != nil {
		return nil, nil, err
	}
	s := string(out)
	count := func(t string) int {
		n, err := c.Count(t)
		if err != nil {
			return -1
		}
		return n
	}
	rep := &Report{
		Mode: res.Params.Mode.String(), Workspace: res.Workspace, Encoding: c.Encoding().String(),
		Bytes: len(out), Chars: len16(s), Tokens: count(s),
		TruncationWarningShown: res.Warning.Shown, Warnings: res.Warnings,
	}
	b := &rep.Boundary
	b.StableKey = fmt.Sprintf("%016x", lay.Key)
	b.StablePrefixHash = fmt.Sprintf("%016x", lay.PrefixHash)
	stable := s[:lay.StableLen]
	b.StableBytes, b.StableChars, b.StableTokens = len(stable), len16(stable), count(stable)
	if lay.Marker >= 0 {
		b.Present = true
		b.MarkerByte, b.MarkerChar = lay.Marker, len16(s[:lay.Marker])
		dyn := s[lay.DynamicStart:]
		b.DynamicChars, b.DynamicTokens = len16(dyn), count(dyn)
	}
	for _, sp := range spans {
		if sp.End < sp.Start {
			continue
		}
		t := s[sp.Start:sp.End]
		part := "stable"
		if lay.Marker >= 0 && sp.Start > lay.Marker {
			part = "dynamic"
		}
		rep.Sections = append(rep.Sections, SectionReport{Name: sp.Name, Part: part, Bytes: len(t), Chars: len16(t), Tokens: count(t)})
	}
	for _, raw := range res.Raw {
		fr := FileReport{Name: raw.Name, Path: raw.Path, Missing: raw.Missing, RawChars: raw.RawChars}
		for _, f := range res.Files {
			if f.Path == raw.Path {
				fr.Injected = true
				fr.InjectedChars = f.InjectedChars
				fr.Truncated = f.Truncated
				fr.Tokens = count(f.Content)
				fr.Part = "stable"
				if isDynamicFile(f.Path) {
					fr.Part = "dynamic"
				}
			}
		}
		rep.Files = append(rep.Files, fr)
	}
	sk := res.Skills
	rep.Skills = SkillsReport{Eligible: sk.Eligible, Included: sk.Included, Compact: sk.Compact, Truncated: sk.Truncated,
		Chars: len16(sk.Prompt), Tokens: count(sk.Prompt)}
	return rep, out, nil
}

// WriteText writes the report in the style of /context list.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Context breakdown (system prompt, mode %s, %s)\n", r.Mode, r.Encoding)
	if r.Workspace != "" {
		fmt.Fprintf(&b, "Workspace: %s\n", r.Workspace)
	}
	fmt.Fprintf(&b, "System prompt: %d chars (%d bytes), %d tokens\n", r.Chars, r.Bytes, r.Tokens)
	bd := r.Boundary
	if bd.Present {
		fmt.Fprintf(&b, "Cache boundary: at char %d (byte %d); stable prefix %d chars, %d tokens; dynamic %d chars, %d tokens\n",
			bd.MarkerChar, bd.MarkerByte, bd.StableChars, bd.StableTokens, bd.DynamicChars, bd.DynamicTokens)
	} else {
		b.WriteString("Cache boundary: none (mode none)\n")
	}
	fmt.Fprintf(&b, "Stable-prefix hash: %s (input key %s)\n", bd.StablePrefixHash, bd.StableKey)
	b.WriteString("\nInjected workspace files:\n")
	if len(r.Files) == 0 {
		b.WriteString("  (none)\n")
	}
	for _, f := range r.Files {
		status := "OK"
		switch {
		case f.Missing:
			status = "MISSING"
		case !f.Injected:
			status = "SKIPPED"
		case f.Truncated:
			status = "TRUNCATED"
		}
		fmt.Fprintf(&b, "  - %-13s %-9s raw %6d chars | injected %6d chars | %5d tokens", f.Name, status, f.RawChars, f.InjectedChars, f.Tokens)
		if f.Part == "dynamic" {
			b.WriteString(" | below boundary")
		}
		b.WriteByte('\n')
	}
	sk := r.Skills
	format := "full format"
	if sk.Compact {
		format = "compact format"
	}
	fmt.Fprintf(&b, "\nSkills: %d of %d in prompt (%s%s), %d chars, %d tokens\n", sk.Included, sk.Eligible, format,
		map[bool]string{true: ", truncated", false: ""}[sk.Truncated], sk.Chars, sk.Tokens)
	b.WriteString("\nSections:\n")
	for _, s := range r.Sections {
		fmt.Fprintf(&b, "  %-8s %-40s %6d chars %6d tokens\n", s.Part, s.Name, s.Chars, s.Tokens)
	}
	if r.TruncationWarningShown {
		b.WriteString("\nBootstrap truncation warning shown in the prompt.\n")
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\nWarnings:\n")
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "  - %s\n", w)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
