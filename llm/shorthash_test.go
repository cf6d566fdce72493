package llm

import "testing"

// Values from @openclaw/ai's shortHash.
func TestShortHash(t *testing.T) {
	for s, want := range map[string]string{
		"http://127.0.0.1/v1":       "96b0v71s5r76n",
		"":                          "k4n83c7h0j2b",
		"a":                         "m8735310ae7sx",
		"https://api.openai.com/v1": "ozhevd1smnk8s",
		"é💡x":                       "1caflan1rjeuwh",
	} {
		if got := ShortHash(s); got != want {
			t.Errorf("ShortHash(%q) = %s, want %s", s, got, want)
		}
	}
}
