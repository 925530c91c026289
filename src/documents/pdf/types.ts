// Shapes shared by the PDF modules. Every box is in PDF points, origin at the TOP-LEFT of the page as displayed
// (after /Rotate, inside the visible CropBox): the API's coordinate system.

/** What a document field is: signed (signature, initials), the date of signing, or a value its signer fills in. */
export type FieldType = 'signature' | 'initials' | 'date' | 'text' | 'checkbox' | 'number' | 'email' | 'enum';
/** The types a signing request's `coordinates` fields may have. */
export const FIELD_TYPES: readonly FieldType[] = ['signature', 'initials', 'date', 'text', 'checkbox'];

export type Box = { x: number; y: number; width: number; height: number };

export type Anchor = { type: FieldType; role: string; page: number; box: Box };

/**
 * How a signer fills a field in (documents/fields.ts checks values against it). A `date` field with rules is a date
 * the signer picks; without rules it is the date of signing.
 */
export type FieldRules = {
  label?: string;
  required?: boolean;
  pattern?: string;
  max_length?: number;
  options?: string[];
  min?: number;
  max?: number;
};

export type Field = { id: string; role: string; type: FieldType; page: number; rules?: FieldRules } & Box;

export type PageInfo = { width: number; height: number; rotation: number };

/** One problem found while checking a placement; `code` is the catalogue code sent on the wire. */
export type Problem = { code: string; message: string; meta?: Record<string, unknown> };
