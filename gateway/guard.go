package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/ocbench/ocbench/internal/redact"
)

// guard is the gateway's front door, before any route: browser
// cross-site requests, DNS rebinding, the gateway's own API key and JSON
// bodies. A web page open in the operator's browser must not be able to
// start runs (which execute tools) on a gateway bound to localhost.
//
//   - A request with an Origin header is refused (403) unless the origin is
//     in Config.CORSOrigins; allowed origins get CORS headers and their
//     preflight (OPTIONS) answered. CORS is off by default.
//   - With Config.CheckHost, the Host header must be localhost, an IP
//     literal or one of Config.AllowedHosts (a rebinding page names its
//     own domain).
//   - With Config.AuthKey, every /v1/ request must carry it as
//     "Authorization: Bearer KEY" or "x-api-key: KEY" (compared in
//     constant time); /healthz and /metrics stay open for probes.
//   - POST bodies must be declared JSON (application/json): text/plain,
//     which a browser form or a "simple" cross-site fetch sends without a
//     preflight, is 415.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.CheckHost && !s.hostAllowed(r.Host) {
			s.m.rejected.WithLabelValues(routeOf(r.URL.Path), "host").Inc()
			writeError(w, http.StatusMisdirectedRequest, "permission_error", "host not allowed: start the gateway with --allow-host")
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			if !s.originAllowed(origin) {
				s.m.rejected.WithLabelValues(routeOf(r.URL.Path), "origin").Inc()
				writeError(w, http.StatusForbidden, "permission_error", "cross-origin requests are refused: start the gateway with --cors "+origin+" to allow this origin")
				return
			}
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Expose-Headers", "Retry-After, X-Request-Id, Request-Id")
			if r.Method == http.MethodOptions {
				h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
				if rh := r.Header.Get("Access-Control-Request-Headers"); rh != "" {
					h.Set("Access-Control-Allow-Headers", rh)
				}
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if s.authKey != nil && strings.HasPrefix(r.URL.Path, "/v1/") && !s.authorized(r) {
			s.m.rejected.WithLabelValues(routeOf(r.URL.Path), "auth").Inc()
			w.Header().Set("WWW-Authenticate", `Bearer realm="ocbench"`)
			writeError(w, http.StatusUnauthorized, "authentication_error", "missing or wrong gateway API key")
			return
		}
		if r.Method == http.MethodPost && !isJSON(r.Header.Get("Content-Type")) {
			s.m.rejected.WithLabelValues(routeOf(r.URL.Path), "content_type").Inc()
			writeError(w, http.StatusUnsupportedMediaType, "invalid_request_error", "the body must be sent as Content-Type: application/json")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func isJSON(ct string) bool {
	if ct == "application/json" {
		return true // what nearly every client sends: nothing to parse
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

func (s *Server) originAllowed(origin string) bool {
	return slices.Contains(s.cfg.CORSOrigins, "*") || slices.Contains(s.cfg.CORSOrigins, origin)
}

func (s *Server) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || net.ParseIP(host) != nil {
		return true
	}
	return slices.Contains(s.cfg.AllowedHosts, host)
}

// authorized compares the request's key with the gateway's through their
// SHA-256 sums, so that neither the content nor the length of the key
// leaks through timing.
func (s *Server) authorized(r *http.Request) bool {
	key := r.Header.Get("X-Api-Key")
	if a := r.Header.Get("Authorization"); key == "" && len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		key = strings.TrimSpace(a[7:])
	}
	if key == "" {
		return false
	}
	sum := sha256.Sum256([]byte(key))
	return subtle.ConstantTimeCompare(sum[:], s.authKey) == 1
}

// secrets redacts what never reaches a client, a log line or a session
// file: the configured keys (and key-shaped tokens, by internal/redact's
// patterns) plus the credentials of the request at hand, which an
// upstream may echo in an error. The request's credentials are looked up,
// and its redactor built, only when something is redacted (error paths):
// a request that succeeds pays nothing for them.
type secrets struct {
	base   *redact.Redactor // the configured secrets
	list   []string         // their values, to build a request's redactor
	hdr    http.Header      // the request's headers, for its credentials
	merged *redact.Redactor // base plus the request's credentials, once built
}

// requestSecrets is s's configured secrets plus the credentials r carries.
func (s *Server) requestSecrets(r *http.Request) secrets {
	return secrets{base: s.redactor, list: s.secretList, hdr: r.Header}
}

func (sc *secrets) redactor() *redact.Redactor {
	if sc.merged != nil {
		return sc.merged
	}
	var creds []string
	for _, k := range [...]string{"Authorization", "X-Api-Key"} {
		v := strings.TrimSpace(sc.hdr.Get(k))
		if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
			v = strings.TrimSpace(v[7:])
		}
		if len(v) >= redact.MinSecretLen {
			creds = append(creds, v)
		}
	}
	sc.merged = sc.base
	if len(creds) > 0 {
		sc.merged = redact.New(append(append([]string(nil), sc.list...), creds...)...)
	}
	return sc.merged
}

func (sc *secrets) bytes(b []byte) []byte    { return sc.redactor().Bytes(b) }
func (sc *secrets) string(str string) string { return sc.redactor().String(str) }
