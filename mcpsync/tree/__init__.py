"""Locked dependency trees at work: resolve each npm/PyPI server's whole tree at lock time
(locking), one backend per kind (npm, pypi), the content-addressed cache a tree is
materialised into (cache), and `mcpsync run`'s launcher (launcher). What a tree record is
and how it is checked lives with the lock (mcpsync.lock.tree). May import lock, manifest,
artifacts and below; sync and trust use the launcher to point entries at it.
"""
