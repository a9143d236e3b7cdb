#!/usr/bin/env python3
"""Marks a dm-log-writes log with what had been acknowledged, every INTERVAL seconds.

    log-marks.py DEVICE MARKS INTERVAL STOP FILE...

Until the file STOP exists: reads the sizes of FILE... (the receivers' logs and the answered
commands' log, in the order replay-log.py expects: http, mqtt, commands), then sends the mark
"aN" to the log-writes device DEVICE (its device-mapper name), then appends
{"mark": "aN", "http": …, "mqtt": …, "commands": …} to MARKS. The sizes are read before the mark
is made, so whatever they cover was acknowledged before the mark entered the log.

The mark goes through the device-mapper ioctl DM_TARGET_MSG, as `dmsetup message DEVICE 0 mark
aN` sends it, without a process per mark (include/uapi/linux/dm-ioctl.h: struct dm_ioctl, then
struct dm_target_msg, a sector and the message).
"""
import fcntl
import json
import os
import struct
import sys
import time

DM_IOCTL = struct.Struct("=3I I I I i I I I Q 128s 129s 7s")   # struct dm_ioctl: 312 bytes
DM_TARGET_MSG = (3 << 30) | (DM_IOCTL.size << 16) | (0xFD << 8) | 14  # _IOWR(DM_IOCTL, DM_TARGET_MSG_CMD, …)


def message(control, device, text):
    payload = struct.pack("=Q", 0) + text.encode() + b"\0"
    size = DM_IOCTL.size + len(payload)
    size += -size % 8
    header = DM_IOCTL.pack(4, 0, 0, size, DM_IOCTL.size, 0, 0, 0, 0, 0, 0, device.encode(), b"", b"")
    buffer = bytearray(header + payload + bytes(size - DM_IOCTL.size - len(payload)))
    fcntl.ioctl(control, DM_TARGET_MSG, buffer)


def main():
    device, marks, interval, stop, files = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5:]
    names = ("http", "mqtt", "commands")
    control = os.open("/dev/mapper/control", os.O_RDWR)
    count = 0
    with open(marks, "a") as out:
        while not os.path.exists(stop):
            count += 1
            sizes = [os.stat(path).st_size for path in files]
            message(control, device, f"mark a{count}")
            out.write(json.dumps({"mark": f"a{count}", **dict(zip(names, sizes))}) + "\n")
            out.flush()
            time.sleep(interval)
    print(f"{count} marks")


if __name__ == "__main__":
    main()
