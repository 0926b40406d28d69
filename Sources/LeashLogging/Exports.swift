@_exported import Leash
