package epay

import (
	"net/url"
	"testing"

	"tollgate/service/payment/epay/epaytest"
)

func TestSign_KnownVectorSkipsSignTypeAndEmptyValues(t *testing.T) {
	// md5("money=10.00&name=Top-up&out_trade_no=T1&pid=1001&type=alipayKEY"), computed with md5sum.
	v := url.Values{"pid": {"1001"}, "type": {"alipay"}, "out_trade_no": {"T1"}, "name": {"Top-up"}, "money": {"10.00"},
		"sign_type": {"MD5"}, "sign": {"ignored"}, "param": {""}}
	if got := Sign(v, "KEY"); got != "2eec7a9b766591e1a953ab14c56769bf" {
		t.Fatalf("Sign = %s", got)
	}
	flat := map[string]string{}
	for k := range v {
		flat[k] = v.Get(k)
	}
	if epaytest.SignParams(flat, "KEY") != Sign(v, "KEY") {
		t.Fatal("the fake gateway signs differently")
	}
}
