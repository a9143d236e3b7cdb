#!/bin/bash
# bluetooth-bonded.sh REPO HEALTHGATE [SECONDS] - runs INSIDE the lab VM (see run-bluetooth-bonded.sh).
#
# Two btvirt controllers: hci0 = a glucose meter that requires bonding
# (Tests/DeviceLab/peripherals/lab-glucose.py: Glucose and Device Information, every glucose
# characteristic behind an encrypted, authenticated link, a pairing agent that enters passkey
# 24680, three stored records and a fourth on SIGUSR1); hci1 = the gateway. Checks:
#   1. `healthgate pair` with a wrong passkey fails with a message that says so, and no bond is made;
#   2. `healthgate run` with the meter's entry {"address": …, "passkey": 24680} pairs through its
#      own agent (the meter is asked for its passkey), BlueZ holds the bond (Paired, a long-term
#      key in /var/lib/bluetooth), and the three stored records arrive through the Record Access
#      Control Point, each once, at their values;
#   3. a restart of the gateway after the meter stored a fourth record pairs no more and asks only
#      for the records after sequence number 3: exactly record 4 is added;
#   4. with the gateway stopped, `healthgate pair --forget` removes the bond, and
#      `healthgate pair ADDRESS --passkey 24680` pairs again by hand; a new gateway run uses that
#      bond without pairing;
#   5. bluetoothd still runs, and healthgate stops cleanly on SIGTERM.
# Every healthgate command runs as the service user `healthgate` on a strict system bus: BlueZ's
# policy without Debian's grant of org.bluez to every user, and healthgate's shipped policy
# (udev-rules/dbus-healthgate.conf), which a call it does not list is refused by.
set -uo pipefail
REPO=${1:?usage: bluetooth-bonded.sh REPO HEALTHGATE [SECONDS]}
source "$REPO/Tests/DeviceLab/lib/bluetooth-scenario.sh"
scenario_arguments 150 "$@"

STRICT_BUS=1
start_bluetooth 2
refused=$(as_service gdbus call --system -d org.bluez -o /org/bluez -m org.bluez.AgentManager1.RequestDefaultAgent \
  /org/healthgate/pairing_agent 2>&1)
[[ $refused == *AccessDenied* ]] && pass "the service user is refused a call the policy does not grant (RequestDefaultAgent)" ||
  fail "the service user was not refused RequestDefaultAgent: $refused"
as_service gdbus call --system -d org.bluez -o / -m org.freedesktop.DBus.ObjectManager.GetManagedObjects > /dev/null 2>&1 &&
  pass "the service user may call what the policy grants (GetManagedObjects)" || fail "the service user cannot call GetManagedObjects" 
# LE legacy pairing, as most glucose meters do it. With Secure Connections the one bluetoothd
# that serves both ends derives a BR/EDR link key from the LE key (cross-transport key
# derivation) and then tries BR/EDR connections to btvirt's LE-only controllers; in two runs
# bluetoothd then hung or was killed. Legacy passkey entry still gives an authenticated key.
for index in 0 1; do
  btmgmt --index "$index" sc off > /dev/null 2>&1 || fail "Secure Connections off on hci$index"
done
METER=$(address hci0)
GATEWAY=$(address hci1)
echo "glucose meter (hci0) $METER, gateway (hci1) $GATEWAY"
$PY -u "$PERIPHERALS/lab-glucose.py" /org/bluez/hci0 24680 > "$OUT/meter.log" 2>&1 &
METER_PID=$!
poll 120 grep -q 'GATT application registered' "$OUT/meter.log" && poll 120 grep -q 'Advertisement registered' "$OUT/meter.log" &&
  pass "glucose meter up on hci0 (its agent: $(grep -o 'KeyboardOnly.*' "$OUT/meter.log"))" ||
  { fail "the meter did not start"; cat "$OUT/meter.log"; }

paired() {
  gdbus call --system -d org.bluez -o "/org/bluez/hci1/dev_${METER//:/_}" -m org.freedesktop.DBus.Properties.Get \
    org.bluez.Device1 Paired 2> /dev/null | grep -q true
}

say "healthgate pair with a wrong passkey"
as_service "$HG" pair "$METER" --passkey 111111 --adapter hci1 --timeout 30 > "$OUT/pair-wrong.out" 2> "$OUT/pair-wrong.err"
status=$?
cat "$OUT/pair-wrong.out" "$OUT/pair-wrong.err"
[[ $status -eq 1 ]] && grep -q 'pairing failed' "$OUT/pair-wrong.err" &&
  pass "a wrong passkey is refused (exit 1, 'pairing failed')" || fail "a wrong passkey: exit $status"
paired && fail "a bond was made with a wrong passkey" || pass "no bond after the wrong passkey"

say "healthgate run: ble-health on hci1, the meter's entry with its passkey"
cat > "$OUT/healthgate.json" <<JSON
{
  "sources": [
    {"kind": "ble-health", "name": "meter", "config": {
      "adapter": "hci1", "devices": [{"address": "$METER", "passkey": 24680}],
      "reconnect": {"initialDelaySeconds": 1, "maxDelaySeconds": 5, "multiplier": 2}}}
  ],
  "store": {"path": "$DB"},
  "sinks": [{"kind": "sqlite", "name": "store"}]
}
JSON
start_gateway "$OUT/healthgate.json"
glucose() { query "SELECT count(*) FROM samples_readable WHERE type = 'bloodGlucose'"; }
at_least() { [[ $($1) -ge $2 ]]; }
poll "$WAIT" at_least glucose 3 && pass "the three stored records arrive ($(glucose))" ||
  fail "no stored glucose records within ${WAIT}s ($(glucose))"
[[ $(grep -c 'passkey requested' "$OUT/meter.log") -ge 2 ]] &&
  pass "the meter was asked for its passkey again: the gateway's pairing used passkey entry" ||
  fail "the meter's agent was not asked for a passkey by the gateway's pairing"
grep -q 'paired; BlueZ keeps the bond' "$OUT/healthgate.log" && pass "healthgate paired through its own agent, as the service user" ||
  fail "no pairing in healthgate's log"
paired && pass "BlueZ reports the meter paired" || fail "BlueZ does not report the meter paired"
keys=$(grep -ls 'LongTermKey' /var/lib/bluetooth/"$GATEWAY"/"$METER"/info 2> /dev/null)
[[ -n $keys ]] && pass "BlueZ stored the bond (a long-term key in /var/lib/bluetooth/$GATEWAY/$METER/info)" ||
  fail "no long-term key stored for the meter"
values=$(query "SELECT group_concat(CAST(round(value) AS INTEGER), ',') FROM (SELECT value FROM samples_readable WHERE type = 'bloodGlucose' ORDER BY start_us)")
[[ $values == "110,96,131" ]] && pass "the records' values, in order: $values mg/dL" || fail "the records' values: $values"

say "restart the gateway after the meter stored a fourth record"
kill -TERM "$GATEWAY_PID"; wait "$GATEWAY_PID"
kill -USR1 "$METER_PID"
poll 10 grep -q 'stored record 4' "$OUT/meter.log" || fail "the meter did not store record 4"
mv "$OUT/healthgate.log" "$OUT/healthgate-first.log"
start_gateway "$OUT/healthgate.json"
# A reconnect to the bonded meter once took a failed 30-second attempt before the link came up
# (CI, 2026-11-23): the wait covers one such attempt, and a miss shows this run's whole log.
poll $((WAIT + 40)) at_least glucose 4 && pass "record 4 arrives after the restart ($(glucose))" ||
  { fail "no fourth record ($(glucose))"; cat "$OUT/healthgate.log"; }
grep -q 'asked for the stored glucose records after sequence number 3' "$OUT/healthgate.log" &&
  pass "the second run asks only for the records after its checkpoint" || fail "the second run did not ask from the checkpoint"
grep -q '] pairing' "$OUT/healthgate.log" && fail "the second run paired again" || pass "the second run did not pair again (the bond is BlueZ's)"
sleep 3
[[ $(glucose) -eq 4 ]] && pass "each record stored once ($(glucose))" || fail "records stored more than once ($(glucose))"

say "stop the gateway; healthgate pair --forget, then pair by hand"
# A running gateway with the meter's entry would reconnect and pair beside the command (two
# agents answering for one device; in one run the command's Pair then timed out): a user pairs
# by hand with the gateway stopped.
kill -TERM "$GATEWAY_PID"; wait "$GATEWAY_PID"
status=$?
[[ $status -eq 0 ]] && pass "healthgate run exits 0 on SIGTERM" || fail "healthgate run exited $status"
as_service "$HG" pair --forget "$METER" --adapter hci1 > "$OUT/pair-forget.out" 2>&1 && grep -q "forgot $METER" "$OUT/pair-forget.out" &&
  pass "pair --forget removed the bond" || { fail "pair --forget"; cat "$OUT/pair-forget.out"; }
# Finding the meter again after --forget took 22 s in one run (it advertises again only after
# the gateway let go of it), so the timeout is generous.
as_service "$HG" pair "$METER" --passkey 24680 --adapter hci1 --timeout 60 > "$OUT/pair-hand.out" 2> "$OUT/pair-hand.err"
status=$?
# In one run the meter was not seen for over 60 s after --forget (it advertised again later); in
# another btvirt never brought the LE link up for Pair, and bluetoothd left the call unanswered
# (NoReply; its log: the bonding cancelled, connect_failed status 14). As a user would after
# either message, the pairing is tried once more; the first error is printed.
if [[ $status -ne 0 ]] && grep -qE 'was not seen|NoReply' "$OUT/pair-hand.err"; then
  echo "first attempt failed; trying again: $(cat "$OUT/pair-hand.err")"
  as_service "$HG" pair "$METER" --passkey 24680 --adapter hci1 --timeout 90 > "$OUT/pair-hand.out" 2> "$OUT/pair-hand.err"
  status=$?
fi
cat "$OUT/pair-hand.out"
[[ $status -eq 0 ]] && grep -q "paired $METER" "$OUT/pair-hand.out" && paired &&
  pass "healthgate pair ADDRESS --passkey 24680 paired the meter again" || { fail "pairing by hand: exit $status"; cat "$OUT/pair-hand.err"; }

say "the gateway again, on the bond made by hand"
mv "$OUT/healthgate.log" "$OUT/healthgate-second.log"
start_gateway "$OUT/healthgate.json"
poll "$WAIT" grep -q 'asked for the stored glucose records after sequence number 4' "$OUT/healthgate.log" &&
  pass "the gateway follows the meter from its checkpoint" || { fail "the gateway did not reach the meter"; cat "$OUT/healthgate.log"; }
grep -q '] pairing' "$OUT/healthgate.log" && fail "the gateway paired again" || pass "the gateway used the bond made by hand"
[[ $(glucose) -eq 4 ]] && pass "still each record once ($(glucose))" || fail "records: $(glucose)"

finish
