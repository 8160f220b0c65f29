package transport

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

func TestProtocolCacheLearnsUsesAndForgets(t *testing.T) {
	ctx := context.Background()
	offers, err := ExecOffers(Auto, "")
	if err != nil || len(offers) < 2 {
		t.Fatalf("ExecOffers(auto) = %v, %v; want a choice", offers, err)
	}
	second := offers[1]
	calls := 0
	newCache := func() *ProtocolCache {
		return &ProtocolCache{
			Path: filepath.Join(t.TempDir(), "p.json"), Endpoint: "unix:///x.sock",
			Identify: func(context.Context) (string, error) { calls++; return "rt 1.0", nil },
		}
	}
	c := newCache()
	if got, moved := c.Order(ctx, "exec", offers, Config{}); moved || got[0].Transport != offers[0].Transport {
		t.Fatalf("an empty cache reordered: %v", got)
	}
	refused := Attempt{Offer: offers[0], Err: &RefusedError{Offer: offers[0], Status: 403}}
	accepted := Attempt{Offer: second, Protocol: second.Protocols[0]}
	c.Remember(ctx, "exec", offers, []Attempt{refused, accepted}, false, Config{})

	// A new process (a new cache value) on the same file.
	c2 := &ProtocolCache{Path: c.Path, Endpoint: c.Endpoint, Identify: c.Identify}
	got, moved := c2.Order(ctx, "exec", offers, Config{})
	if !moved || got[0].Transport != second.Transport || len(got) != len(offers) {
		t.Fatalf("after a fallback the cache offered %v first (moved %v), want %v", got, moved, second)
	}
	if other, moved := c2.Order(ctx, "attach", offers, Config{}); moved || other[0].Transport != offers[0].Transport {
		t.Fatal("an entry for exec reordered attach")
	}
	if one, moved := c2.Order(ctx, "exec", offers[:1], Config{}); moved || len(one) != 1 {
		t.Fatal("a single offer (explicit --protocol) was touched")
	}
	// What another order (--transport websocket: v5 then v4) learns stays
	// with that order.
	ws, err := ExecOffers(WebSocket, "")
	if err != nil || len(ws) < 2 {
		t.Fatalf("ExecOffers(websocket) = %v, %v", ws, err)
	}
	c2.Remember(ctx, "exec", ws, []Attempt{{Offer: ws[0], Err: &RefusedError{Offer: ws[0], Status: 403}}, {Offer: ws[1], Protocol: ws[1].Protocols[0]}}, false, Config{})
	if got, _ := c2.Order(ctx, "exec", offers, Config{}); got[0].Transport != second.Transport {
		t.Fatalf("a --transport websocket session changed what auto offers first: %v", got[0])
	}
	// The remembered protocol refused, nothing accepted: the entry goes.
	c2.Remember(ctx, "exec", offers, []Attempt{{Offer: second, Err: &RefusedError{Offer: second, Status: 403}}}, true, Config{})
	c3 := &ProtocolCache{Path: c.Path, Endpoint: c.Endpoint, Identify: c.Identify}
	if _, moved := c3.Order(ctx, "exec", offers, Config{}); moved {
		t.Fatal("a refused remembered protocol was offered first again")
	}
	if calls != 3 {
		t.Fatalf("Identify ran %d times, want once per cache value (3)", calls)
	}

	// A runtime that cannot say who it is gets no cache.
	failing := &ProtocolCache{Path: c.Path, Identify: func(context.Context) (string, error) { return "", errors.New("down") }}
	if _, moved := failing.Order(ctx, "exec", offers, Config{}); moved {
		t.Fatal("reordered without a runtime identity")
	}
	var none *ProtocolCache
	if got, moved := none.Order(ctx, "exec", offers, Config{}); moved || len(got) != len(offers) {
		t.Fatal("a nil cache reordered")
	}
	none.Remember(ctx, "exec", offers, []Attempt{refused, accepted}, false, Config{})
}

func TestDefaultProtocolCachePathNeedsAHome(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", filepath.Join(t.TempDir(), "no-such-home"))
	if p := DefaultProtocolCachePath(); p != "" {
		t.Fatalf("DefaultProtocolCachePath() = %q with a HOME that does not exist, want none", p)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	if p := DefaultProtocolCachePath(); p != filepath.Join(home, ".cache", "crisp", "protocols.json") {
		t.Fatalf("DefaultProtocolCachePath() = %q", p)
	}
}
