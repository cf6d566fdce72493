package repair

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"reflect"
	"testing"
)

// jsonValue decodes one JSON text the way JavaScript's JSON.parse would
// see it (duplicate keys: the last wins).
func jsonValue(t testing.TB, b []byte) (any, bool) {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, false
	}
	return v, true
}

// sameJSON reports whether a and b are the same JSON value, ignoring
// member order.
func sameJSON(t testing.TB, a, b []byte) bool {
	t.Helper()
	va, oka := jsonValue(t, a)
	vb, okb := jsonValue(t, b)
	return oka && okb && reflect.DeepEqual(va, vb)
}

// oracleRow is one input of testdata/oracle.json.gz with the outputs that
// OpenClaw 2026.9.6's tryExtractUsableToolCallArguments and
// decodeHtmlEntities and pi-ai 0.73.1's parseStreamingJson gave for it.
type oracleRow struct {
	In   string `json:"in"`
	Tool string `json:"tool"`
	OC   *struct {
		Args  json.RawMessage `json:"args"`
		Kind  string          `json:"kind"`
		Lead  int             `json:"lead"`
		Trail int             `json:"trail"`
	} `json:"oc"`
	Pi    string `json:"pi"`
	PiHow string `json:"piHow"`
	Ent   string `json:"ent"`
}

func loadOracle(t testing.TB) []oracleRow {
	t.Helper()
	f, err := os.Open("testdata/oracle.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var rows []oracleRow
	if err := json.NewDecoder(zr).Decode(&rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) < 1000 {
		t.Fatalf("oracle has only %d rows", len(rows))
	}
	return rows
}
