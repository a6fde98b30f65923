package ha

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/faultproxy"
	"github.com/fairwayhq/fairway/internal/pgtest"
)

type readiness struct {
	Role, Leader string
}

func ready(t *testing.T, addr string) readiness {
	t.Helper()
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r readiness
	_ = json.NewDecoder(resp.Body).Decode(&r)
	return r
}

func waitRole(t *testing.T, addr, role string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for ready(t, addr).Role != role {
		if time.Now().After(deadline) {
			t.Fatalf("%s is %q after 20 s, want %s", addr, ready(t, addr).Role, role)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A standby answers /readyz from memory: cut off from the database, it
// still names the leader it last saw (no database round trip per probe).
func TestAStandbyAnswersReadyzFromMemory(t *testing.T) {
	base := pgtest.URL(t)
	a := startNode(t, base, "a")
	waitRole(t, a, "leader")
	proxy, proxied := faultproxy.StartFor(t, base)
	b := startNode(t, proxied, "b")
	waitRole(t, b, "standby")
	for ready(t, b).Leader != a {
		time.Sleep(20 * time.Millisecond)
	}
	proxy.Blackhole()
	if r := ready(t, b); r.Role != "standby" || r.Leader != a {
		t.Errorf("the cut-off standby's /readyz: %+v, want standby naming %s", r, a)
	}
}

// A leader cut off from the database stops saying it leads (/readyz) as
// its term ends, and another instance leads.
func TestACutOffLeaderStandsBy(t *testing.T) {
	base := pgtest.URL(t)
	proxy, proxied := faultproxy.StartFor(t, base)
	a := startNode(t, proxied, "a")
	waitRole(t, a, "leader")
	b := startNode(t, base, "b")
	waitRole(t, b, "standby")
	proxy.Blackhole()
	cut := time.Now()
	waitRole(t, a, "standby")
	t.Logf("a stood by %s after the cut", time.Since(cut))
	waitRole(t, b, "leader")
	t.Logf("b led %s after the cut", time.Since(cut))
}

// A leader whose database connections are all reset, for less than its
// lease, writes again without a restart: a dead writer connection ends the
// term, and a new term opens the store afresh.
func TestALeaderWritesAgainAfterItsConnectionsReset(t *testing.T) {
	base := pgtest.URL(t)
	proxy, proxied := faultproxy.StartFor(t, base)
	a := startNode(t, proxied, "a")
	waitRole(t, a, "leader")
	submit := func(key string) int {
		hc := &http.Client{Timeout: 10 * time.Second}
		resp, err := hc.Post("http://"+a+"/api/v1/jobs", "application/json",
			strings.NewReader(`{"type":"report","tenant":"acme","idempotency_key":"`+key+`"}`))
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := submit("before"); code != http.StatusCreated {
		t.Fatalf("submit before the reset: %d", code)
	}
	proxy.Cut()
	deadline := time.Now().Add(30 * time.Second)
	var code int
	for i := 0; time.Now().Before(deadline); i++ {
		if code = submit(fmt.Sprintf("after-%d", i)); code == http.StatusCreated {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code != http.StatusCreated {
		t.Fatalf("30 s after the reset submits still get %d", code)
	}
}
