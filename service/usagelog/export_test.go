package usagelog

// ApplyMoneyOnce is the money step of a batch whose rows go to a separate log database.
var ApplyMoneyOnce = applyMoneyOnce
