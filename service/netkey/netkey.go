// Package netkey names the client network a per-address limit counts (sign-ups, sign-in failures,
// redemption-code guesses, the relay's per-IP rate), so that every limit treats IPv6 the same way.
package netkey

import "net/netip"

// Of is the address a per-address limit counts: an IPv4 address as it is, an IPv6 address as its /64. One
// IPv6 host (any VPS) holds a whole /64, so counting single IPv6 addresses would give an attacker 2^64 fresh
// allowances for sign-ups, password guesses and code guesses. Anything unparsable is counted as given.
func Of(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String()
	}
	return netip.PrefixFrom(a, 64).Masked().String()
}
