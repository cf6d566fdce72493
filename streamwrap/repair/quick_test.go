package repair

import "testing"

func TestQuickSmoke(t *testing.T) {
	for _, in := range []string{
		`{"a":1}`, `.functions.read:0 {"path":"/tmp/report.txt"}x`, `{“path”:“safe.txt”,“offset”:5,“limit”:20}`,
		`{"a":`, `[1]`, `{"a":1,}`,
	} {
		out, res, err := Extended(nil, []byte(in), []byte("read"))
		oc, k, l, tr, ok := OpenClawExtract(nil, []byte(in), []byte("read"))
		pi, how := PiParse(nil, []byte(in))
		t.Logf("%q -> ext %s %v %v | oc %s %v %d %d %v | pi %s %v", in, out, res, err, oc, k, l, tr, ok, pi, how)
	}
	t.Logf("%s", DecodeHTMLEntities(nil, []byte("a &amp;amp; &AMP; &#x41; &#55296; &lt &notit; &notin; &Quot;")))
	t.Logf("%s", DecodeEntitiesInJSON(nil, []byte(`{"a&amp;":"x &amp; \u0026lt; y","b":[1,"&quot;"]}`)))
}
