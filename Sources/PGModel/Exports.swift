// SwiftData code uses Foundation types and Observation without importing them itself.
@_exported import Foundation
@_exported import Observation
@_exported import PGModelCore
