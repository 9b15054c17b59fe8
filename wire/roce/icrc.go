package roce

import (
	"encoding/binary"
	"hash/crc32"
)

// lrhState is the CRC register after the eight 0xFF bytes that stand for
// the LRH (Linux's rxe driver starts from the same constant).
const lrhState = 0xdebb20e3

// icrc computes the ICRC of the RoCEv2 datagram whose IPv4 header
// (ihl bytes) starts at b[ip] and whose ICRC occupies b[end-4:end]. The
// caller has checked that the headers fit. It only reads b: the masked
// copy of the headers is folded eight bytes at a time with slicing
// tables of its own (foldHeader), since crc32.Update reaches its assembly
// through a function variable, which would move any buffer passed to it,
// a stack copy included, to the heap; the rest of the datagram, already
// in b, goes through crc32.Update.
func icrc(b []byte, ip, ihl, end int) uint32 {
	var h [ipv4MaxLen + UDPLen + BTHLen]byte
	n := copy(h[:], b[ip:ip+ihl+UDPLen+BTHLen])
	h[1], h[8], h[10], h[11] = 0xFF, 0xFF, 0xFF, 0xFF // TOS, TTL, header checksum
	h[ihl+6], h[ihl+7] = 0xFF, 0xFF                   // UDP checksum
	h[ihl+UDPLen+4] = 0xFF                            // BTH FECN, BECN, Resv6
	crc := foldHeader(lrhState, h[:n])
	return crc32.Update(^crc, crc32.IEEETable, b[ip+n:end-ICRCLen])
}

// slicing8 are the IEEE polynomial's slicing-by-8 tables (Intel's
// "Slicing-by-8" CRC, as hash/crc32 builds its own): slicing8[0] is the
// byte table, and slicing8[k][v] is v's byte followed by k zero bytes.
var slicing8 = func() *[8][256]uint32 {
	t := new([8][256]uint32)
	t[0] = *crc32.IEEETable
	for v := range 256 {
		c := t[0][v]
		for k := 1; k < 8; k++ {
			c = t[0][c&0xFF] ^ c>>8
			t[k][v] = c
		}
	}
	return t
}()

// foldHeader runs the CRC register crc (not inverted) over h, eight bytes
// a step: a header's 40-80 bytes take a quarter of the byte loop's
// dependent table loads.
func foldHeader(crc uint32, h []byte) uint32 {
	t := slicing8
	for len(h) >= 8 {
		crc ^= binary.LittleEndian.Uint32(h)
		crc = t[0][h[7]] ^ t[1][h[6]] ^ t[2][h[5]] ^ t[3][h[4]] ^
			t[4][crc>>24] ^ t[5][crc>>16&0xFF] ^ t[6][crc>>8&0xFF] ^ t[7][crc&0xFF]
		h = h[8:]
	}
	for _, v := range h {
		crc = t[0][byte(crc)^v] ^ crc>>8
	}
	return crc
}

// putICRC computes and writes the ICRC of a datagram laid out as icrc
// expects. Since it writes b anyway, it masks the variant fields in place
// and runs one crc32.Update over the whole datagram, which is several
// times faster than icrc's byte loop; then it puts the fields back.
func putICRC(b []byte, ip, ihl, end int) { putICRCZeros(b, ip, ihl, end-ICRCLen, end) }

// putICRCZeros is putICRC of a datagram whose bytes from b[zeros] to its
// ICRC are zeros: it reads the bytes before them and steps the CRC over
// the zeros without reading them (shiftZeros).
func putICRCZeros(b []byte, ip, ihl, zeros, end int) {
	udp := ip + ihl
	bth := udp + UDPLen
	tos, ttl, c0, c1 := b[ip+1], b[ip+8], b[ip+10], b[ip+11]
	u0, u1, fb := b[udp+6], b[udp+7], b[bth+4]
	b[ip+1], b[ip+8], b[ip+10], b[ip+11] = 0xFF, 0xFF, 0xFF, 0xFF
	b[udp+6], b[udp+7], b[bth+4] = 0xFF, 0xFF, 0xFF
	crc := crc32.Update(^uint32(lrhState), crc32.IEEETable, b[ip:zeros])
	crc = ^shiftZeros(^crc, end-ICRCLen-zeros)
	b[ip+1], b[ip+8], b[ip+10], b[ip+11] = tos, ttl, c0, c1
	b[udp+6], b[udp+7], b[bth+4] = u0, u1, fb
	binary.LittleEndian.PutUint32(b[end-ICRCLen:end], crc)
}

// zeroShiftBits: zeroShift steps the CRC over up to 2^zeroShiftBits - 1
// zero bytes with one table per bit of the count, a jumbo frame's
// payload and more; longer runs take the largest table again.
const zeroShiftBits = 14

// zeroShift[k] steps a CRC register (not inverted) over 2^k zero bytes:
// with no input the register's step is linear, so the register after
// them is the XOR of zeroShift[k][j][the register's byte j], j = 0..3.
var zeroShift = func() *[zeroShiftBits][4][256]uint32 {
	t := new([zeroShiftBits][4][256]uint32)
	for j := range 4 {
		for v := range 256 {
			c := uint32(v) << (8 * j)
			t[0][j][v] = crc32.IEEETable[c&0xFF] ^ c>>8 // one zero byte
		}
	}
	for k := 1; k < zeroShiftBits; k++ {
		for j := range 4 {
			for v := range 256 {
				c := uint32(v) << (8 * j)
				t[k][j][v] = applyShift(&t[k-1], applyShift(&t[k-1], c))
			}
		}
	}
	return t
}()

func applyShift(t *[4][256]uint32, c uint32) uint32 {
	return t[0][c&0xFF] ^ t[1][c>>8&0xFF] ^ t[2][c>>16&0xFF] ^ t[3][c>>24]
}

// shiftZeros steps the CRC register crc (not inverted) over n zero
// bytes: a table look-up per byte of the register for each bit set in
// n, where crc32.Update would read every byte.
func shiftZeros(crc uint32, n int) uint32 {
	const top = zeroShiftBits - 1
	for ; n >= 1<<top; n -= 1 << top {
		crc = applyShift(&zeroShift[top], crc)
	}
	for k := 0; n > 0; k, n = k+1, n>>1 {
		if n&1 != 0 {
			crc = applyShift(&zeroShift[k], crc)
		}
	}
	return crc
}

// storedICRC is the ICRC in the last four bytes of the datagram ending at
// end, read in the byte order icrc's value has.
func storedICRC(b []byte, end int) uint32 {
	return binary.LittleEndian.Uint32(b[end-ICRCLen : end])
}

// SetICRC recomputes the ICRC of frame b after its BTH, extension headers
// or payload changed. It checks the frame's headers as Parse does (but not
// the ICRC) and changes nothing when they are malformed.
func SetICRC(b []byte) error {
	var l layout
	if err := l.parseAll(b); err != nil {
		return err
	}
	putICRC(b, l.ip, l.ihl, l.end)
	return nil
}

// CheckICRC reports whether frame b's ICRC is correct: nil, ErrBadICRC,
// or an error wrapping ErrMalformed when the headers are not a RoCEv2
// frame the package parses.
func CheckICRC(b []byte) error {
	var l layout
	if err := l.parseAll(b); err != nil {
		return err
	}
	if icrc(b, l.ip, l.ihl, l.end) != storedICRC(b, l.end) {
		return ErrBadICRC
	}
	return nil
}

// ComputeICRC is the ICRC frame b should carry, for tools that display it;
// the value compares equal to the little-endian reading of the ICRC bytes.
func ComputeICRC(b []byte) (uint32, error) {
	var l layout
	if err := l.parseAll(b); err != nil {
		return 0, err
	}
	return icrc(b, l.ip, l.ihl, l.end), nil
}
