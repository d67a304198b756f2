#!/usr/bin/python3
"""A passthrough FUSE filesystem whose fsync can be made to fail, for zflux's fault tests.

    faultfs.py BACKING MOUNTPOINT CONTROL

Mirrors the directory BACKING at MOUNTPOINT. While the file CONTROL/fail-fsync exists, every fsync and
fdatasync (of a file or a directory) answers EIO, and what was written to the file since its last
good fsync is lost: the backing file is cut back to the length it had then, as a kernel that drops
the dirty pages of a failed writeback leaves it (the files here are written by appending, so what
was written since is the file's end). Each failure is logged as one line in CONTROL/failures.

Files are opened with direct I/O, so a reader always sees the backing file, never a page the kernel
kept. Needs Debian's python3-pyfuse3 and fuse3. SIGTERM or SIGINT unmounts and exits; a process
killed otherwise leaves the mount behind, which `fusermount3 -u -z MOUNTPOINT` removes.
"""

import errno
import os
import signal
import stat
import sys

import pyfuse3
import trio


class FaultFS(pyfuse3.Operations):
    def __init__(self, backing, control):
        super().__init__()
        self.control = control
        # Our inode numbers, the backing file each names ((st_dev, st_ino)), and its current path.
        self.paths = {pyfuse3.ROOT_INODE: backing}
        self.inodes = {}
        root = os.lstat(backing)
        self.inodes[(root.st_dev, root.st_ino)] = pyfuse3.ROOT_INODE
        self.next_inode = pyfuse3.ROOT_INODE + 1
        # The length of each backing file at its last good fsync (or when it was first opened).
        self.synced = {}

    # Inodes and attributes

    def path(self, inode):
        try:
            return self.paths[inode]
        except KeyError:
            raise pyfuse3.FUSEError(errno.ENOENT)

    def inode_for(self, st, path):
        key = (st.st_dev, st.st_ino)
        inode = self.inodes.get(key)
        if inode is None:
            inode = self.next_inode
            self.next_inode += 1
            self.inodes[key] = inode
        self.paths[inode] = path
        return inode

    def attributes(self, st, inode):
        entry = pyfuse3.EntryAttributes()
        for name in ("st_mode", "st_nlink", "st_uid", "st_gid", "st_rdev", "st_size", "st_atime_ns", "st_mtime_ns", "st_ctime_ns"):
            setattr(entry, name, getattr(st, name))
        entry.st_ino = inode
        entry.generation = 0
        # Nothing cached: sizes change behind the kernel's back when a failed fsync drops a file's end.
        entry.entry_timeout = 0
        entry.attr_timeout = 0
        entry.st_blksize = 4096
        entry.st_blocks = (st.st_size + 511) // 512
        return entry

    def stat_path(self, path):
        try:
            return os.lstat(path)
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)

    def entry(self, path):
        st = self.stat_path(path)
        return self.attributes(st, self.inode_for(st, path))

    def child(self, parent, name):
        return os.path.join(self.path(parent), os.fsdecode(name))

    async def lookup(self, parent_inode, name, ctx=None):
        return self.entry(self.child(parent_inode, name))

    async def getattr(self, inode, ctx=None):
        path = self.path(inode)
        return self.attributes(self.stat_path(path), inode)

    async def setattr(self, inode, attr, fields, fh, ctx):
        path = self.path(inode)
        try:
            if fields.update_size:
                if fh is None:
                    os.truncate(path, attr.st_size)
                else:
                    os.ftruncate(fh, attr.st_size)
            if fields.update_mode:
                os.chmod(path, stat.S_IMODE(attr.st_mode))
            if fields.update_uid or fields.update_gid:
                os.chown(path, attr.st_uid if fields.update_uid else -1, attr.st_gid if fields.update_gid else -1)
            if fields.update_atime or fields.update_mtime:
                old = os.lstat(path)
                os.utime(
                    path,
                    ns=(
                        attr.st_atime_ns if fields.update_atime else old.st_atime_ns,
                        attr.st_mtime_ns if fields.update_mtime else old.st_mtime_ns,
                    ),
                )
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)
        return await self.getattr(inode)

    async def forget(self, inode_list):
        pass  # paths stay known; a test's filesystem lives for one test

    async def statfs(self, ctx):
        st = os.statvfs(self.paths[pyfuse3.ROOT_INODE])
        data = pyfuse3.StatvfsData()
        for name in ("f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail", "f_files", "f_ffree", "f_favail", "f_namemax"):
            setattr(data, name, getattr(st, name))
        return data

    # Directories

    async def opendir(self, inode, ctx):
        try:
            return os.open(self.path(inode), os.O_RDONLY | os.O_DIRECTORY)
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)

    async def readdir(self, fh, start_id, token):
        # The directory is listed whole, in name order; an entry's id is its place in that list + 1.
        path = os.readlink(f"/proc/self/fd/{fh}")
        names = sorted(os.listdir(path))
        for index in range(start_id, len(names)):
            child = os.path.join(path, names[index])
            try:
                st = os.lstat(child)
            except OSError:
                continue
            if not pyfuse3.readdir_reply(token, os.fsencode(names[index]), self.attributes(st, self.inode_for(st, child)), index + 1):
                break

    async def releasedir(self, fh):
        os.close(fh)

    async def fsyncdir(self, fh, datasync):
        if self.failing():
            self.record(f"fsync of directory {os.readlink(f'/proc/self/fd/{fh}')} failed")
            raise pyfuse3.FUSEError(errno.EIO)
        os.fsync(fh)

    async def mkdir(self, parent_inode, name, mode, ctx):
        path = self.child(parent_inode, name)
        try:
            os.mkdir(path, mode & ~ctx.umask)
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)
        return self.entry(path)

    async def rmdir(self, parent_inode, name, ctx):
        try:
            os.rmdir(self.child(parent_inode, name))
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)

    async def unlink(self, parent_inode, name, ctx):
        try:
            os.unlink(self.child(parent_inode, name))
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)

    async def rename(self, parent_inode_old, name_old, parent_inode_new, name_new, flags, ctx):
        if flags != 0:
            raise pyfuse3.FUSEError(errno.EINVAL)
        old = self.child(parent_inode_old, name_old)
        new = self.child(parent_inode_new, name_new)
        try:
            os.rename(old, new)
            st = os.lstat(new)
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)
        self.inode_for(st, new)

    # Files

    def opened(self, fd):
        st = os.fstat(fd)
        self.synced.setdefault((st.st_dev, st.st_ino), st.st_size)
        return pyfuse3.FileInfo(fh=fd, direct_io=True, keep_cache=False)

    async def open(self, inode, flags, ctx):
        try:
            fd = os.open(self.path(inode), flags & ~(os.O_CREAT | os.O_EXCL | os.O_NOCTTY | os.O_TRUNC))
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)
        return self.opened(fd)

    async def create(self, parent_inode, name, mode, flags, ctx):
        path = self.child(parent_inode, name)
        try:
            fd = os.open(path, flags | os.O_CREAT, mode & ~ctx.umask)
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)
        return self.opened(fd), self.entry(path)

    async def read(self, fh, off, size):
        try:
            return os.pread(fh, size, off)
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)

    async def write(self, fh, off, buf):
        try:
            # A file opened to append is appended to (Linux's pwrite does so whatever the offset).
            return os.pwrite(fh, buf, off)
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)

    async def flush(self, fh):
        pass

    async def release(self, fh):
        os.close(fh)

    async def fsync(self, fh, datasync):
        st = os.fstat(fh)
        key = (st.st_dev, st.st_ino)
        if self.failing():
            kept = min(self.synced.get(key, st.st_size), st.st_size)
            os.ftruncate(fh, kept)
            self.record(f"fsync of {os.readlink(f'/proc/self/fd/{fh}')} failed; dropped {st.st_size - kept} bytes written since the last good one")
            raise pyfuse3.FUSEError(errno.EIO)
        os.fsync(fh)
        self.synced[key] = st.st_size

    # Faults

    def failing(self):
        return os.path.exists(os.path.join(self.control, "fail-fsync"))

    def record(self, line):
        with open(os.path.join(self.control, "failures"), "a") as log:
            log.write(line + "\n")


async def serve():
    async with trio.open_nursery() as nursery:
        nursery.start_soon(pyfuse3.main)
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for _ in signals:
                break
        nursery.cancel_scope.cancel()


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: faultfs.py BACKING MOUNTPOINT CONTROL")
    backing, mountpoint, control = (os.path.abspath(a) for a in sys.argv[1:])
    options = set(pyfuse3.default_options)
    options.add("fsname=zflux-faultfs")
    pyfuse3.init(FaultFS(backing, control), mountpoint, options)
    try:
        trio.run(serve)
    finally:
        pyfuse3.close(unmount=True)


if __name__ == "__main__":
    main()
