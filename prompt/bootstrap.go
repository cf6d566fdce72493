package prompt

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Bootstrap budget defaults of OpenClaw 2026.5.7.
const (
	DefaultBootstrapMaxChars      = 12000
	DefaultBootstrapTotalMaxChars = 60000
	// DefaultHeadRatio and DefaultTailRatio split a truncated file between
	// its head and its tail (75% / 25%).
	DefaultHeadRatio = 0.75
	DefaultTailRatio = 0.25
	// minRemainingForFile: below this many characters of total budget no
	// further file is injected.
	minRemainingForFile = 64
	// compactMarkerMinContent: the compact marker is used when the full one
	// would leave fewer content characters than this.
	compactMarkerMinContent = 16
)

// Bootstrap file names, in load order.
var BootstrapFileNames = []string{"AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md", "BOOTSTRAP.md", "MEMORY.md"}

// MinimalBootstrapFileNames are the files subagent and cron sessions keep.
var MinimalBootstrapFileNames = []string{"AGENTS.md", "TOOLS.md", "SOUL.md", "IDENTITY.md", "USER.md"}

// BootstrapFile is one workspace bootstrap file before budgeting.
type BootstrapFile struct {
	Name    string // basename, e.g. "AGENTS.md"
	Path    string // absolute path; empty paths are skipped with a warning
	Content string
	Missing bool
	// Error, if set, is why the file could not be read; it is injected as
	// a missing file.
	Error error
}

// Budget configures buildBootstrapContextFiles.
type Budget struct {
	// MaxChars is the per-file limit (DefaultBootstrapMaxChars if <= 0).
	MaxChars int
	// TotalMaxChars is the limit over all files (if <= 0:
	// max(MaxChars, 60000)).
	TotalMaxChars int
	// HeadRatio and TailRatio split a truncated file (0.75 / 0.25 if both
	// are 0).
	HeadRatio, TailRatio float64
}

func (b Budget) norm() Budget {
	if b.MaxChars <= 0 || math.IsNaN(float64(b.MaxChars)) {
		b.MaxChars = DefaultBootstrapMaxChars
	}
	if b.TotalMaxChars <= 0 {
		b.TotalMaxChars = max(b.MaxChars, DefaultBootstrapTotalMaxChars)
	}
	if b.HeadRatio <= 0 && b.TailRatio <= 0 {
		b.HeadRatio, b.TailRatio = DefaultHeadRatio, DefaultTailRatio
	}
	if b.HeadRatio < 0 {
		b.HeadRatio = 0
	}
	if b.TailRatio < 0 {
		b.TailRatio = 0
	}
	if s := b.HeadRatio + b.TailRatio; s > 1 {
		b.HeadRatio, b.TailRatio = b.HeadRatio/s, b.TailRatio/s
	}
	return b
}

// InjectedFile is one file as injected, with its accounting.
type InjectedFile struct {
	Name, Path string
	Content    string
	// RawChars is the trailing-whitespace-trimmed length, InjectedChars the
	// injected length (UTF-16 units).
	RawChars, InjectedChars int
	Truncated, Missing      bool
}

// BuildContextFiles is OpenClaw's buildBootstrapContextFiles: it applies
// the per-file and total budgets in load order, injects missing files as
// "[MISSING] Expected at: <path>" markers, skips blank files, truncates
// oversized ones head+tail with a marker, and returns the injected files and
// the warnings it would log.
func BuildContextFiles(files []BootstrapFile, budget Budget) ([]InjectedFile, []string) {
	b := budget.norm()
	remaining := max(1, b.TotalMaxChars)
	var out []InjectedFile
	var warnings []string
	for _, f := range files {
		if remaining <= 0 {
			break
		}
		if strings.TrimSpace(f.Path) == "" {
			warnings = append(warnings, fmt.Sprintf("skipping bootstrap file %q — missing or invalid \"path\" field (hook may have used \"filePath\" instead)", f.Name))
			continue
		}
		if f.Missing || f.Error != nil {
			marker := "[MISSING] Expected at: " + f.Path
			clamped := prefix16(marker, remaining)
			if clamped == "" {
				break
			}
			n := len16(clamped)
			out = append(out, InjectedFile{Name: f.Name, Path: f.Path, Content: clamped, InjectedChars: n, Missing: true})
			remaining -= n
			continue
		}
		if remaining < minRemainingForFile {
			warnings = append(warnings, fmt.Sprintf("remaining bootstrap budget is %d chars (<%d); skipping additional bootstrap files", remaining, minRemainingForFile))
			break
		}
		fileMax := max(1, min(b.MaxChars, remaining))
		raw := trimEndJS(f.Content)
		rawLen := len16(raw)
		content, truncated := trimContent(raw, rawLen, f.Name, fileMax, b.HeadRatio, b.TailRatio)
		if n := len16(content); n > remaining {
			if remaining <= 3 {
				content = prefix16(content, remaining)
			} else {
				content = prefix16(content, remaining-1) + "…"
			}
			truncated = true
		}
		if content == "" {
			continue
		}
		if truncated {
			warnings = append(warnings, fmt.Sprintf("workspace bootstrap file %s is %d chars (limit %d); truncating in injected context", f.Name, rawLen, fileMax))
		}
		n := len16(content)
		out = append(out, InjectedFile{Name: f.Name, Path: f.Path, Content: content, RawChars: rawLen, InjectedChars: n, Truncated: truncated})
		remaining -= n
	}
	return out, warnings
}

// TrimContent is OpenClaw's trimBootstrapContent with the default 75/25
// split: the content with trailing whitespace trimmed, cut to maxChars
// UTF-16 units by keeping a head and a tail around a truncation marker.
func TrimContent(content, fileName string, maxChars int) (string, bool) {
	t := trimEndJS(content)
	return trimContent(t, len16(t), fileName, maxChars, DefaultHeadRatio, DefaultTailRatio)
}

func fullMarker(name string, h, t, total int) string {
	return "\n[...truncated, read " + name + " for full content...]\n…(truncated " + name + ": kept " +
		strconv.Itoa(h) + "+" + strconv.Itoa(t) + " chars of " + strconv.Itoa(total) + ")…\n"
}

func compactMarker(h, t, total int) string {
	return "[…truncated " + strconv.Itoa(h) + "+" + strconv.Itoa(t) + "/" + strconv.Itoa(total) + "]"
}

func trimContent(t string, n int, name string, maxChars int, headRatio, tailRatio float64) (string, bool) {
	if n <= maxChars {
		return t, false
	}
	compact := maxChars-len16(fullMarker(name, 0, 0, n))-2 < compactMarkerMinContent
	marker := func(h, tl int) string {
		if compact {
			return compactMarker(h, tl, n)
		}
		return fullMarker(name, h, tl, n)
	}
	seps := func(h, tl int) int {
		if compact {
			return 0
		}
		s := 0
		if h > 0 {
			s++
		}
		if tl > 0 {
			s++
		}
		return s
	}
	h, tl := 0, 0
	m := marker(0, 0)
	sepCount := 0
	if !compact {
		sepCount = 2
	}
	for range 3 {
		budget := max(0, maxChars-len16(m)-sepCount)
		nh, nt := int(math.Floor(float64(budget)*headRatio)), int(math.Floor(float64(budget)*tailRatio))
		nm := marker(nh, nt)
		stable := nh == h && nt == tl && nm == m
		h, tl, m = nh, nt, nm
		sepCount = seps(h, tl)
		if stable {
			break
		}
	}
	render := func() int { return h + tl + len16(marker(h, tl)) + seps(h, tl) }
	if over := render() - maxChars; over > 0 {
		d := min(over, tl)
		tl -= d
		over -= d
		h = max(0, h-over)
		for render() > maxChars && (tl > 0 || h > 0) {
			if tl > 0 {
				tl--
			} else {
				h--
			}
		}
	}
	if h == 0 && tl == 0 && 1+len16(marker(1, 0))+seps(1, 0) <= maxChars {
		h = 1
	}
	head, tail := prefix16(t, h), suffix16(t, tl)
	var b strings.Builder
	b.WriteString(head)
	if !compact && head != "" {
		b.WriteByte('\n')
	}
	b.WriteString(marker(h, tl))
	if !compact && tail != "" {
		b.WriteByte('\n')
	}
	b.WriteString(tail)
	return prefix16(b.String(), maxChars), true
}
