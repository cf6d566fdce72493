package prompt

import (
	"slices"
	"strings"
	"sync"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
)

// Skill limits of OpenClaw 2026.5.7 (skills.limits.*).
const (
	DefaultMaxSkillsInPrompt    = 150
	DefaultMaxSkillsPromptChars = 18000
	// skillsCompactReserve is kept free of the character budget when the
	// compact format is used.
	skillsCompactReserve = 150
)

// Skill is one skill entry (from <dir>/SKILL.md front matter).
type Skill struct {
	Name        string
	Description string
	FilePath    string
	BaseDir     string
	Source      string
	// DisableModelInvocation and HideFromPrompt
	// (exposure.includeInAvailableSkillsPrompt=false) keep a skill out of
	// <available_skills>.
	DisableModelInvocation bool
	HideFromPrompt         bool
}

// SkillLimits bound the skills prompt.
type SkillLimits struct {
	MaxSkillsInPrompt    int // DefaultMaxSkillsInPrompt if <= 0
	MaxSkillsPromptChars int // DefaultMaxSkillsPromptChars if <= 0
}

// SkillsResult describes a built skills prompt.
type SkillsResult struct {
	Prompt    string
	Eligible  int // skills eligible for the prompt
	Included  int
	Compact   bool // descriptions omitted
	Truncated bool
	Warning   string
}

const skillsIntro = "\n\nThe following skills provide specialized instructions for specific tasks.\n"
const skillsRelPath = "When a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.\n\n<available_skills>"

// FormatSkills renders pi's Agent Skills block, with descriptions (full) or
// without (compact). An empty list renders "".
func FormatSkills(skills []Skill, compact bool) string {
	if len(skills) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(skillsIntro)
	if compact {
		b.WriteString("Use the read tool to load a skill's file when the task matches its name.\n")
	} else {
		b.WriteString("Use the read tool to load a skill's file when the task matches its description.\n")
	}
	b.WriteString(skillsRelPath)
	for _, s := range skills {
		b.WriteString("\n  <skill>\n    <name>")
		xmlEscape(&b, s.Name)
		b.WriteString("</name>")
		if !compact {
			b.WriteString("\n    <description>")
			xmlEscape(&b, s.Description)
			b.WriteString("</description>")
		}
		b.WriteString("\n    <location>")
		xmlEscape(&b, s.FilePath)
		b.WriteString("</location>\n  </skill>")
	}
	b.WriteString("\n</available_skills>")
	return b.String()
}

func xmlEscape(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&apos;")
		default:
			b.WriteByte(c)
		}
	}
}

// skillCollators hands each sort its own English collator: a
// collate.Collator keeps its comparison iterators inside the value, so one
// shared between concurrent runs panics or mis-sorts (and a mis-sorted
// skills list changes the system prompt and its cache prefix). A pool
// instead of a lock keeps concurrent runs from queueing on one collator.
var skillCollators = sync.Pool{New: func() any { return collate.New(language.English) }}

// sortSkillsByName sorts stably by name in English collation, OpenClaw's
// localeCompare order.
func sortSkillsByName(skills []Skill) {
	if len(skills) < 2 {
		return
	}
	c := skillCollators.Get().(*collate.Collator)
	slices.SortStableFunc(skills, func(a, b Skill) int { return c.CompareString(a.Name, b.Name) })
	skillCollators.Put(c)
}

// BuildSkillsPrompt is resolveWorkspaceSkillPromptState's prompt: eligible
// skills (hidden ones removed), home-dir paths shortened to "~/…", sorted
// by name (English collation), limited in count and characters (falling
// back to the compact format, then to the largest prefix whose compact
// form fits), with the warning line and an optional remote note first.
func BuildSkillsPrompt(skills []Skill, limits SkillLimits, homeDir, remoteNote string) SkillsResult {
	if limits.MaxSkillsInPrompt <= 0 {
		limits.MaxSkillsInPrompt = DefaultMaxSkillsInPrompt
	}
	if limits.MaxSkillsPromptChars <= 0 {
		limits.MaxSkillsPromptChars = DefaultMaxSkillsPromptChars
	}
	var eligible []Skill
	home := strings.TrimRight(homeDir, "/")
	for _, s := range skills {
		if s.DisableModelInvocation || s.HideFromPrompt {
			continue
		}
		if home != "" && strings.HasPrefix(s.FilePath, home+"/") {
			s.FilePath = "~/" + s.FilePath[len(home)+1:]
		}
		eligible = append(eligible, s)
	}
	sortSkillsByName(eligible)

	res := SkillsResult{Eligible: len(eligible)}
	limited := eligible
	if len(limited) > limits.MaxSkillsInPrompt {
		limited = limited[:limits.MaxSkillsInPrompt]
		res.Truncated = true
	}
	text := FormatSkills(limited, false)
	if len16(text) > limits.MaxSkillsPromptChars {
		budget := limits.MaxSkillsPromptChars - skillsCompactReserve
		res.Compact = true
		text = FormatSkills(limited, true)
		if len16(text) > budget {
			lo, hi := 0, len(limited) // largest k with compact(k) fitting
			for lo < hi {
				mid := (lo + hi + 1) / 2
				if len16(FormatSkills(limited[:mid], true)) <= budget {
					lo = mid
				} else {
					hi = mid - 1
				}
			}
			limited = limited[:lo]
			text = FormatSkills(limited, true)
			res.Truncated = true
		}
	}
	res.Included = len(limited)
	switch {
	case res.Truncated:
		res.Warning = "⚠️ Skills truncated: included " + itoa(res.Included) + " of " + itoa(res.Eligible)
		if res.Compact {
			res.Warning += " (compact format, descriptions omitted)"
		}
		res.Warning += ". Run `openclaw skills check` to audit."
	case res.Compact:
		res.Warning = "⚠️ Skills catalog using compact format (descriptions omitted). Run `openclaw skills check` to audit."
	}
	var parts []string
	for _, s := range []string{remoteNote, res.Warning, text} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	res.Prompt = strings.Join(parts, "\n")
	return res
}
