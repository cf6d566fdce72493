//go:build !linux

package prompt

// quickStat is only implemented on Linux: elsewhere every lookup takes the
// guarded path.
func quickStat(string) (fileSig, bool) { return fileSig{}, false }

// haveQuickStat tells whether quickStat can see a file at all (PromptIn's
// memo validates by it).
const haveQuickStat = false
