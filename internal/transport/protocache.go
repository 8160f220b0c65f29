package transport

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// ProtocolCache remembers, per runtime (endpoint, name and version) and
// call, the protocol the runtime accepted last time, so that --transport
// auto offers it first: on containerd and CRI-O that skips the WebSocket v5
// attempt they refuse (an Exec RPC and an upgrade answered 403) on every
// session after the first. A refusal of the remembered protocol drops the
// entry and the session falls back through the rest of the order as usual;
// a runtime upgrade changes the key. The file is small JSON, written
// atomically; a cache that cannot be read or written is no cache.
type ProtocolCache struct {
	// Path is the cache file.
	Path string
	// Endpoint names the runtime as the user reached it.
	Endpoint string
	// Identify returns the runtime's name and version (the CRI Version
	// call); it runs only when there is a choice to make.
	Identify func(ctx context.Context) (string, error)

	once sync.Once
	key  string
}

// protocolCacheEntries bounds the file: least recently used go first.
const protocolCacheEntries = 32

type protocolCacheEntry struct {
	Transport Transport `json:"transport"`
	Protocol  string    `json:"protocol"`
	Used      time.Time `json:"used"`
}

// DefaultProtocolCachePath is crisp/protocols.json in the user's cache
// folder, or "" (no cache) when there is no home to keep it in.
func DefaultProtocolCachePath() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	// Never create a home that does not exist (test harnesses point HOME
	// at one): the cache folder's parent must be there already.
	if _, err := os.Stat(filepath.Dir(dir)); err != nil {
		return ""
	}
	return filepath.Join(dir, "crisp", "protocols.json")
}

// entryKey names the runtime, the call and the order offered: what a
// session with --transport websocket learns says nothing about auto.
func (c *ProtocolCache) entryKey(ctx context.Context, op string, offers []Offer) string {
	c.once.Do(func() {
		if c.Identify == nil {
			return
		}
		id, err := c.Identify(ctx)
		if err == nil {
			c.key = c.Endpoint + " " + id
		}
	})
	if c.key == "" {
		return ""
	}
	order := make([]string, len(offers))
	for i, o := range offers {
		order[i] = o.String()
	}
	return c.key + " " + op + " [" + strings.Join(order, ", ") + "]"
}

func (c *ProtocolCache) load() map[string]protocolCacheEntry {
	m := map[string]protocolCacheEntry{}
	b, err := os.ReadFile(c.Path)
	if err == nil {
		_ = json.Unmarshal(b, &m) // a damaged cache is an empty one
	}
	return m
}

func (c *ProtocolCache) store(m map[string]protocolCacheEntry) error {
	for len(m) > protocolCacheEntries {
		oldest := ""
		for k, e := range m {
			if oldest == "" || e.Used.Before(m[oldest].Used) {
				oldest = k
			}
		}
		delete(m, oldest)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.Path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.Path), ".protocols-*.json")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name()) // best effort: a stray temp file is harmless
		return err
	}
	return os.Rename(tmp.Name(), c.Path)
}

// Consulted says whether Order may ask the runtime who it is (the Version
// call) before it orders offers: the caller can make its first URL call
// meanwhile, since that call is the same whatever comes first.
func (c *ProtocolCache) Consulted(offers []Offer) bool {
	return c != nil && c.Path != "" && len(offers) >= 2
}

// Order returns offers with the remembered protocol's offer first, and
// whether it moved one. Nothing moves with a single offer (an explicit
// --transport or --protocol), without a cache, or without an entry.
func (c *ProtocolCache) Order(ctx context.Context, op string, offers []Offer, cfg Config) ([]Offer, bool) {
	if !c.Consulted(offers) {
		return offers, false
	}
	key := c.entryKey(ctx, op, offers)
	if key == "" {
		return offers, false
	}
	e, ok := c.load()[key]
	if !ok {
		return offers, false
	}
	i := slices.IndexFunc(offers, func(o Offer) bool {
		return o.Transport == e.Transport && slices.Contains(o.Protocols, e.Protocol)
	})
	if i <= 0 {
		return offers, false
	}
	ordered := append([]Offer{offers[i]}, slices.Delete(slices.Clone(offers), i, i+1)...)
	cfg.Log("%s: %s %s was accepted last time (protocol cache %s): offering %s first", op, e.Transport.Title(), e.Protocol, c.Path, offers[i])
	return ordered, true
}

// Remember records what the session's attempts at offers (as given to
// Order, before reordering) showed: the accepted
// protocol, when the runtime did not accept the first offer of the auto
// order or the remembered one was offered; the entry goes when the
// remembered protocol was refused and nothing was accepted.
func (c *ProtocolCache) Remember(ctx context.Context, op string, offers []Offer, attempts []Attempt, reordered bool, cfg Config) {
	if c == nil || c.Path == "" || len(offers) < 2 || len(attempts) == 0 {
		return
	}
	last := attempts[len(attempts)-1]
	if len(attempts) == 1 && last.Accepted() {
		return // the first offer (remembered or not) works: nothing to learn
	}
	key := c.entryKey(ctx, op, offers)
	if key == "" {
		return
	}
	m := c.load()
	switch {
	case last.Accepted():
		m[key] = protocolCacheEntry{Transport: last.Transport, Protocol: last.Protocol, Used: time.Now()}
	case reordered:
		delete(m, key)
	default:
		return
	}
	if err := c.store(m); err != nil {
		cfg.Log("%s: protocol cache %s not updated: %v", op, c.Path, err)
	}
}
